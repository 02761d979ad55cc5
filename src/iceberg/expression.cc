#include "iceberg/expression.h"

#include <cctype>
#include <cmath>

#include "columnar/column_ops.h"
#include "columnar/single_value.h"
#include "columnar/value_format.h"
#include "common/endian.h"

namespace sluice::iceberg {

using Kind = Expr::Kind;
using Op = Expr::Op;

namespace {

ExprPtr Make(Expr e) { return std::make_shared<const Expr>(std::move(e)); }
ExprPtr MakeConst(bool v) {
  Expr e;
  e.kind = v ? Kind::kTrue : Kind::kFalse;
  return Make(std::move(e));
}

// ---------------------------------------------------------------- parsing

struct Token {
  enum Type { kEnd, kIdent, kString, kNumber, kOp, kLParen, kRParen, kComma } type = kEnd;
  std::string text;
  size_t pos = 0;
};

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  Result<ExprPtr> Parse() {
    RETURN_IF_ERROR(Advance());
    ASSIGN_OR_RETURN(ExprPtr e, ParseOr());
    if (tok_.type != Token::kEnd) return Error("unexpected text");
    return e;
  }

 private:
  Status Error(std::string_view what) const {
    return Status::Invalid("filter at character {}{}: {}", tok_.pos + 1,
                           tok_.type == Token::kEnd ? " (end)" : " ('" + tok_.text + "')", what);
  }

  bool IsKeyword(const char* kw) const {
    if (tok_.type != Token::kIdent || quoted_) return false;
    if (tok_.text.size() != std::strlen(kw)) return false;
    for (size_t i = 0; i < tok_.text.size(); ++i) {
      if (std::toupper(static_cast<unsigned char>(tok_.text[i])) != kw[i]) return false;
    }
    return true;
  }

  Status Advance() {
    while (p_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[p_]))) ++p_;
    tok_ = Token{};
    tok_.pos = p_;
    quoted_ = false;
    if (p_ >= s_.size()) return Status::OK();
    char c = s_[p_];
    if (c == '(') {
      tok_.type = Token::kLParen;
      tok_.text = "(";
      ++p_;
    } else if (c == ')') {
      tok_.type = Token::kRParen;
      tok_.text = ")";
      ++p_;
    } else if (c == ',') {
      tok_.type = Token::kComma;
      tok_.text = ",";
      ++p_;
    } else if (c == '\'') {
      tok_.type = Token::kString;
      ++p_;
      while (true) {
        if (p_ >= s_.size())
          return Status::Invalid("filter: unterminated string at character {}", tok_.pos + 1);
        if (s_[p_] == '\'') {
          if (p_ + 1 < s_.size() && s_[p_ + 1] == '\'') {  // '' escapes a quote
            tok_.text.push_back('\'');
            p_ += 2;
            continue;
          }
          ++p_;
          break;
        }
        tok_.text.push_back(s_[p_++]);
      }
    } else if (c == '"' || c == '`') {
      size_t end = s_.find(c, p_ + 1);
      if (end == std::string_view::npos) {
        return Status::Invalid("filter: unterminated identifier at character {}", tok_.pos + 1);
      }
      tok_.type = Token::kIdent;
      tok_.text = std::string(s_.substr(p_ + 1, end - p_ - 1));
      quoted_ = true;
      p_ = end + 1;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.') {
      tok_.type = Token::kNumber;
      size_t start = p_++;
      while (p_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[p_])) || s_[p_] == '.' ||
              ((s_[p_] == '-' || s_[p_] == '+') && (s_[p_ - 1] == 'e' || s_[p_ - 1] == 'E')))) {
        ++p_;
      }
      tok_.text = std::string(s_.substr(start, p_ - start));
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      tok_.type = Token::kIdent;
      size_t start = p_;
      while (p_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[p_])) || s_[p_] == '_' || s_[p_] == '.')) {
        ++p_;
      }
      tok_.text = std::string(s_.substr(start, p_ - start));
    } else if (c == '=' || c == '<' || c == '>' || c == '!') {
      tok_.type = Token::kOp;
      size_t start = p_++;
      if (p_ < s_.size() && (s_[p_] == '=' || (c == '<' && s_[p_] == '>'))) ++p_;
      tok_.text = std::string(s_.substr(start, p_ - start));
      if (tok_.text == "!") return Error("expected '!='");
    } else {
      return Status::Invalid("filter at character {}: unexpected '{}'", p_ + 1, c);
    }
    return Status::OK();
  }

  Result<ExprPtr> ParseOr() {
    ASSIGN_OR_RETURN(ExprPtr left, ParseAnd());
    while (IsKeyword("OR")) {
      RETURN_IF_ERROR(Advance());
      ASSIGN_OR_RETURN(ExprPtr right, ParseAnd());
      Expr e;
      e.kind = Kind::kOr;
      e.children = {left, right};
      left = Make(std::move(e));
    }
    return left;
  }

  Result<ExprPtr> ParseAnd() {
    ASSIGN_OR_RETURN(ExprPtr left, ParseNot());
    while (IsKeyword("AND")) {
      RETURN_IF_ERROR(Advance());
      ASSIGN_OR_RETURN(ExprPtr right, ParseNot());
      Expr e;
      e.kind = Kind::kAnd;
      e.children = {left, right};
      left = Make(std::move(e));
    }
    return left;
  }

  Result<ExprPtr> ParseNot() {
    if (IsKeyword("NOT")) {
      RETURN_IF_ERROR(Advance());
      ASSIGN_OR_RETURN(ExprPtr inner, ParseNot());
      Expr e;
      e.kind = Kind::kNot;
      e.children = {inner};
      return Make(std::move(e));
    }
    return ParsePrimary();
  }

  Result<std::pair<std::string, bool>> Literal() {
    if (tok_.type == Token::kString) {
      std::string t = tok_.text;
      RETURN_IF_ERROR(Advance());
      return std::make_pair(t, true);
    }
    if (tok_.type == Token::kNumber || IsKeyword("TRUE") || IsKeyword("FALSE")) {
      std::string t = tok_.text;
      RETURN_IF_ERROR(Advance());
      return std::make_pair(t, false);
    }
    return Error("expected a literal ('text', a number, TRUE or FALSE)");
  }

  static Op Flip(Op op) {
    switch (op) {
      case Op::kLt: return Op::kGt;
      case Op::kLe: return Op::kGe;
      case Op::kGt: return Op::kLt;
      case Op::kGe: return Op::kLe;
      default: return op;
    }
  }

  Result<Op> ParseOp() {
    const std::string& t = tok_.text;
    Op op;
    if (t == "=" || t == "==") {
      op = Op::kEq;
    } else if (t == "!=" || t == "<>") {
      op = Op::kNe;
    } else if (t == "<") {
      op = Op::kLt;
    } else if (t == "<=") {
      op = Op::kLe;
    } else if (t == ">") {
      op = Op::kGt;
    } else if (t == ">=") {
      op = Op::kGe;
    } else {
      return Error("expected a comparison operator");
    }
    RETURN_IF_ERROR(Advance());
    return op;
  }

  Result<ExprPtr> ParsePrimary() {
    if (tok_.type == Token::kLParen) {
      RETURN_IF_ERROR(Advance());
      ASSIGN_OR_RETURN(ExprPtr e, ParseOr());
      if (tok_.type != Token::kRParen) return Error("expected ')'");
      RETURN_IF_ERROR(Advance());
      return e;
    }
    if (IsKeyword("TRUE") || IsKeyword("FALSE")) {
      bool v = IsKeyword("TRUE");
      RETURN_IF_ERROR(Advance());
      return MakeConst(v);
    }
    Expr e;
    if (tok_.type == Token::kString || tok_.type == Token::kNumber) {
      // literal op column
      ASSIGN_OR_RETURN(auto lit, Literal());
      if (tok_.type != Token::kOp) return Error("expected a comparison operator");
      ASSIGN_OR_RETURN(Op op, ParseOp());
      if (tok_.type != Token::kIdent) return Error("expected a column name");
      e.column = tok_.text;
      RETURN_IF_ERROR(Advance());
      e.kind = Kind::kCompare;
      e.op = Flip(op);
      e.literal_texts = {lit.first};
      e.literal_is_string = {lit.second};
      return Make(std::move(e));
    }
    if (tok_.type != Token::kIdent) return Error("expected a column name, a literal or '('");
    e.column = tok_.text;
    RETURN_IF_ERROR(Advance());
    if (IsKeyword("IS")) {
      RETURN_IF_ERROR(Advance());
      bool negated = false;
      if (IsKeyword("NOT")) {
        negated = true;
        RETURN_IF_ERROR(Advance());
      }
      if (!IsKeyword("NULL")) return Error("expected NULL after IS");
      RETURN_IF_ERROR(Advance());
      e.kind = negated ? Kind::kNotNull : Kind::kIsNull;
      return Make(std::move(e));
    }
    bool not_in = false;
    if (IsKeyword("NOT")) {
      RETURN_IF_ERROR(Advance());
      if (!IsKeyword("IN")) return Error("expected IN after NOT");
      not_in = true;
    }
    if (IsKeyword("IN")) {
      RETURN_IF_ERROR(Advance());
      if (tok_.type != Token::kLParen) return Error("expected '(' after IN");
      RETURN_IF_ERROR(Advance());
      while (true) {
        ASSIGN_OR_RETURN(auto lit, Literal());
        e.literal_texts.push_back(lit.first);
        e.literal_is_string.push_back(lit.second);
        if (tok_.type == Token::kComma) {
          RETURN_IF_ERROR(Advance());
          continue;
        }
        if (tok_.type != Token::kRParen) return Error("expected ',' or ')' in the IN list");
        RETURN_IF_ERROR(Advance());
        break;
      }
      e.kind = not_in ? Kind::kNotIn : Kind::kIn;
      return Make(std::move(e));
    }
    if (tok_.type != Token::kOp) return Error("expected an operator, IN or IS after the column");
    ASSIGN_OR_RETURN(e.op, ParseOp());
    ASSIGN_OR_RETURN(auto lit, Literal());
    e.kind = Kind::kCompare;
    e.literal_texts = {lit.first};
    e.literal_is_string = {lit.second};
    return Make(std::move(e));
  }

  std::string_view s_;
  size_t p_ = 0;
  Token tok_;
  bool quoted_ = false;
};

// ---------------------------------------------------------------- binding

const Field* FindPath(const Schema& schema, const std::string& path) {
  const std::vector<Field>* fields = &schema.fields;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? dot : dot - start);
    const Field* found = nullptr;
    for (const Field& f : *fields) {
      if (f.name == part) found = &f;
    }
    if (found == nullptr || dot == std::string::npos) return found;
    if (found->type->id() != TypeId::kStruct) return nullptr;
    fields = &found->type->fields();
    start = dot + 1;
  }
}

Status AppendLiteral(const std::string& text, bool is_string, Column* c) {
  const DataType& t = *c->type();
  auto number = [&](auto parse) -> Status {
    if (is_string) return Status::Invalid("'{}' is a string, the column is {}", text, t.ToString());
    return parse();
  };
  char* end = nullptr;
  switch (t.id()) {
    case TypeId::kBoolean: {
      std::string l = text;
      for (auto& ch : l) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (l != "true" && l != "false") return Status::Invalid("'{}' is not a boolean", text);
      c->AppendBool(l == "true");
      return Status::OK();
    }
    case TypeId::kInt:
    case TypeId::kLong:
      return number([&]() -> Status {
        errno = 0;
        long long v = std::strtoll(text.c_str(), &end, 10);
        if (*end != '\0' || errno == ERANGE) {
          return Status::Invalid("'{}' is not an integer", text);
        }
        if (t.id() == TypeId::kInt) {
          if (v < INT32_MIN || v > INT32_MAX)
            return Status::OutOfRange("{} is out of int range", text);
          c->Append<int32_t>(static_cast<int32_t>(v));
        } else {
          c->Append<int64_t>(v);
        }
        return Status::OK();
      });
    case TypeId::kFloat:
    case TypeId::kDouble: {
      double v = std::strtod(text.c_str(), &end);
      if (*end != '\0' || text.empty()) return Status::Invalid("'{}' is not a number", text);
      if (t.id() == TypeId::kFloat) {
        c->Append<float>(static_cast<float>(v));
      } else {
        c->Append<double>(v);
      }
      return Status::OK();
    }
    case TypeId::kDecimal: {
      ASSIGN_OR_RETURN(int128_t v, ParseDecimal(text, t.precision(), t.scale()));
      c->Append<int128_t>(v);
      return Status::OK();
    }
    case TypeId::kDate: {
      ASSIGN_OR_RETURN(int32_t v, ParseDate(text));
      c->Append<int32_t>(v);
      return Status::OK();
    }
    case TypeId::kTime: {
      ASSIGN_OR_RETURN(int64_t v, ParseTime(text));
      c->Append<int64_t>(v);
      return Status::OK();
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      bool ns = t.id() == TypeId::kTimestampNs || t.id() == TypeId::kTimestampTzNs;
      ASSIGN_OR_RETURN(int64_t v, ParseTimestamp(text, ns));
      c->Append<int64_t>(v);
      return Status::OK();
    }
    case TypeId::kString: c->AppendBytes(text); return Status::OK();
    case TypeId::kUuid: {
      ASSIGN_OR_RETURN(std::string b, ParseUuid(text));
      c->AppendBytes(b);
      return Status::OK();
    }
    case TypeId::kFixed:
    case TypeId::kBinary: {
      ASSIGN_OR_RETURN(std::string b, ParseHex(text));
      if (t.id() == TypeId::kFixed && static_cast<int>(b.size()) != t.width()) {
        return Status::Invalid("'{}' is not {} bytes", text, t.width());
      }
      c->AppendBytes(b);
      return Status::OK();
    }
    default: return Status::Invalid("cannot compare a {} column with a literal", t.ToString());
  }
}

Op Negate(Op op) {
  switch (op) {
    case Op::kEq: return Op::kNe;
    case Op::kNe: return Op::kEq;
    case Op::kLt: return Op::kGe;
    case Op::kLe: return Op::kGt;
    case Op::kGt: return Op::kLe;
    case Op::kGe: return Op::kLt;
  }
  return op;
}

// Pushes NOT down to the predicates (negation normal form).
ExprPtr PushNot(const ExprPtr& e, bool negate) {
  Expr out = *e;
  switch (e->kind) {
    case Kind::kTrue:
    case Kind::kFalse: return negate ? MakeConst(e->kind == Kind::kFalse) : e;
    case Kind::kNot: return PushNot(e->children[0], !negate);
    case Kind::kAnd:
    case Kind::kOr:
      out.children = {PushNot(e->children[0], negate), PushNot(e->children[1], negate)};
      if (negate) out.kind = e->kind == Kind::kAnd ? Kind::kOr : Kind::kAnd;
      return Make(std::move(out));
    case Kind::kCompare:
      if (negate) out.op = Negate(e->op);
      return Make(std::move(out));
    case Kind::kIn:
    case Kind::kNotIn:
      if (negate) out.kind = e->kind == Kind::kIn ? Kind::kNotIn : Kind::kIn;
      return Make(std::move(out));
    case Kind::kIsNull:
    case Kind::kNotNull:
      if (negate) out.kind = e->kind == Kind::kIsNull ? Kind::kNotNull : Kind::kIsNull;
      return Make(std::move(out));
  }
  return e;
}

Result<ExprPtr> BindTree(const ExprPtr& e, const Schema& schema) {
  Expr out = *e;
  switch (e->kind) {
    case Kind::kTrue:
    case Kind::kFalse: return e;
    case Kind::kAnd:
    case Kind::kOr:
    case Kind::kNot:
      out.children.clear();
      for (const auto& c : e->children) {
        ASSIGN_OR_RETURN(ExprPtr b, BindTree(c, schema));
        out.children.push_back(b);
      }
      return Make(std::move(out));
    default: break;
  }
  const Field* f = FindPath(schema, e->column);
  if (f == nullptr) return Status::Invalid("filter: no column named '{}'", e->column);
  if (f->type->is_nested()) {
    return Status::Invalid("filter: column '{}' is a {}, not a primitive", e->column,
                           f->type->ToString());
  }
  out.field_id = f->id;
  out.type = f->type;
  for (size_t i = 0; i < e->literal_texts.size(); ++i) {
    Column c(f->type);
    Status st = AppendLiteral(e->literal_texts[i], e->literal_is_string[i], &c);
    if (!st.ok()) return st.WithContextF("filter on column '{}'", e->column);
    std::string v;
    AppendSingleValue(c, 0, &v);
    out.values.push_back(std::move(v));
  }
  return Make(std::move(out));
}

// ---------------------------------------------------------------- evaluation

bool IsNaNValue(const DataType& t, std::string_view v) {
  if (t.id() == TypeId::kFloat) return std::isnan(LoadLE<float>(v.data()));
  if (t.id() == TypeId::kDouble) {
    return v.size() == 4 ? std::isnan(LoadLE<float>(v.data()))
                         : std::isnan(LoadLE<double>(v.data()));
  }
  return false;
}

bool Holds(Op op, int cmp) {
  switch (op) {
    case Op::kEq: return cmp == 0;
    case Op::kNe: return cmp != 0;
    case Op::kLt: return cmp < 0;
    case Op::kLe: return cmp <= 0;
    case Op::kGt: return cmp > 0;
    case Op::kGe: return cmp >= 0;
  }
  return false;
}

// Evaluates a predicate on one non-null value (single-value bytes).
bool PredicateOnValue(const Expr& e, std::string_view v) {
  if (IsNaNValue(*e.type, v))
    return e.kind == Kind::kNotIn || (e.kind == Kind::kCompare && e.op == Op::kNe);
  switch (e.kind) {
    case Kind::kCompare: return Holds(e.op, CompareSingleValues(*e.type, v, e.values[0]));
    case Kind::kIn:
    case Kind::kNotIn: {
      bool found = false;
      for (const auto& lit : e.values) found |= CompareSingleValues(*e.type, v, lit) == 0;
      return e.kind == Kind::kIn ? found : !found;
    }
    case Kind::kIsNull: return false;
    case Kind::kNotNull: return true;
    default: return true;
  }
}

Status EvalInto(const Expr& e, const Batch& batch, std::vector<bool>* keep) {
  const size_t n = static_cast<size_t>(batch.num_rows());
  switch (e.kind) {
    case Kind::kTrue: keep->assign(n, true); return Status::OK();
    case Kind::kFalse: keep->assign(n, false); return Status::OK();
    case Kind::kAnd:
    case Kind::kOr: {
      std::vector<bool> a, b;
      RETURN_IF_ERROR(EvalInto(*e.children[0], batch, &a));
      RETURN_IF_ERROR(EvalInto(*e.children[1], batch, &b));
      keep->resize(n);
      for (size_t i = 0; i < n; ++i)
        (*keep)[i] = e.kind == Kind::kAnd ? (a[i] && b[i]) : (a[i] || b[i]);
      return Status::OK();
    }
    case Kind::kNot: {
      // SQL three-valued logic: NOT of a comparison with NULL is still not true.
      ExprPtr pushed = PushNot(std::make_shared<const Expr>(e), false);
      return EvalInto(*pushed, batch, keep);
    }
    default: break;
  }
  const Column* c = FindColumnById(batch, e.field_id);
  if (c == nullptr) {
    return Status::Internal("filter column {} (field id {}) is not in the batch", e.column,
                            e.field_id);
  }
  keep->resize(n);
  std::string v;
  for (size_t i = 0; i < n; ++i) {
    if (c->IsNull(static_cast<int64_t>(i))) {
      (*keep)[i] = e.kind == Kind::kIsNull;
      continue;
    }
    v.clear();
    AppendSingleValue(*c, static_cast<int64_t>(i), &v);
    (*keep)[i] = PredicateOnValue(e, v);
  }
  return Status::OK();
}

// ---------------------------------------------------------------- pruning

// A three-way answer for pruning: can rows match?
bool RangeMightMatch(const Expr& e, const std::optional<std::string>& lower,
                     const std::optional<std::string>& upper, bool may_have_null,
                     bool may_have_value) {
  switch (e.kind) {
    case Kind::kIsNull: return may_have_null;
    case Kind::kNotNull: return may_have_value;
    case Kind::kNotIn: return may_have_value;
    case Kind::kCompare:
      if (!may_have_value) return false;
      if (e.op == Op::kNe || !lower || !upper) return true;
      if (IsNaNValue(*e.type, e.values[0])) return e.op == Op::kNe;
      {
        const DataType& t = *e.type;
        int lo = CompareSingleValues(t, e.values[0], *lower);  // lit vs lower
        int hi = CompareSingleValues(t, e.values[0], *upper);  // lit vs upper
        switch (e.op) {
          case Op::kEq: return lo >= 0 && hi <= 0;
          case Op::kLt: return lo > 0;  // some value < lit needs lower < lit
          case Op::kLe: return lo >= 0;
          case Op::kGt: return hi < 0;
          case Op::kGe: return hi <= 0;
          default: return true;
        }
      }
    case Kind::kIn:
      if (!may_have_value) return false;
      if (!lower || !upper) return true;
      for (const auto& lit : e.values) {
        if (CompareSingleValues(*e.type, lit, *lower) >= 0 &&
            CompareSingleValues(*e.type, lit, *upper) <= 0) {
          return true;
        }
      }
      return false;
    default: return true;
  }
}

template <typename Leaf>
bool WalkMightMatch(const Expr& e, Leaf&& leaf) {
  switch (e.kind) {
    case Kind::kTrue: return true;
    case Kind::kFalse: return false;
    case Kind::kAnd:
      return WalkMightMatch(*e.children[0], leaf) && WalkMightMatch(*e.children[1], leaf);
    case Kind::kOr:
      return WalkMightMatch(*e.children[0], leaf) || WalkMightMatch(*e.children[1], leaf);
    case Kind::kNot: return true;  // bound expressions have NOT pushed down
    default: return leaf(e);
  }
}

// The predicate projected onto partition field `pf` (inclusive: every row
// matching `e` has a partition value matching the projection), or null when
// the transform cannot narrow it.
std::optional<Expr> Project(const Expr& e, const PartitionField& pf, const Schema& schema) {
  using TK = Transform::Kind;
  const Transform& t = pf.transform;
  if (t.kind == TK::kVoid || t.kind == TK::kUnknown) return std::nullopt;
  Expr p = e;
  if (e.kind == Kind::kIsNull || e.kind == Kind::kNotNull) return p;
  const Field* source = schema.FindById(e.field_id);
  if (source == nullptr) return std::nullopt;
  auto result_type = t.ResultType(source->type);
  if (!result_type.ok()) return std::nullopt;
  p.type = *result_type;
  bool monotonic = t.kind != TK::kBucket;
  if (e.kind == Kind::kNotIn || (e.kind == Kind::kCompare && e.op == Op::kNe)) {
    if (t.kind != TK::kIdentity) return std::nullopt;
    return p;
  }
  if (e.kind == Kind::kCompare && e.op != Op::kEq && !monotonic) return std::nullopt;
  // x < v becomes t(x) <= t(v - 1) for integer-like sources (Java's
  // ProjectionUtil does the same), else t(x) <= t(v); x > v likewise.
  int64_t adjust = 0;
  if (e.kind == Kind::kCompare && t.kind != TK::kIdentity) {
    TypeId sid = source->type->id();
    bool integral = sid == TypeId::kInt || sid == TypeId::kLong || sid == TypeId::kDate ||
                    sid == TypeId::kTime || sid == TypeId::kTimestamp ||
                    sid == TypeId::kTimestampTz || sid == TypeId::kTimestampNs ||
                    sid == TypeId::kTimestampTzNs;
    if (e.op == Op::kLt) {
      p.op = Op::kLe;
      adjust = integral ? -1 : 0;
    }
    if (e.op == Op::kGt) {
      p.op = Op::kGe;
      adjust = integral ? 1 : 0;
    }
  }
  p.values.clear();
  for (const auto& v : e.values) {
    Column lit(source->type);
    if (!AppendFromSingleValue(v, &lit).ok()) return std::nullopt;
    if (adjust != 0) {
      if (lit.type()->value_width() == 4) {
        int64_t x = int64_t{lit.Value<int32_t>(0)} + adjust;
        if (x < INT32_MIN || x > INT32_MAX) return std::nullopt;
        lit.mutable_data<int32_t>()[0] = static_cast<int32_t>(x);
      } else {
        int64_t x = lit.Value<int64_t>(0);
        if ((adjust < 0 && x == INT64_MIN) || (adjust > 0 && x == INT64_MAX)) return std::nullopt;
        lit.mutable_data<int64_t>()[0] = x + adjust;
      }
    }
    auto out = t.Apply(lit);
    if (!out.ok() || out->IsNull(0)) return std::nullopt;
    std::string pv;
    AppendSingleValue(*out, 0, &pv);
    p.values.push_back(std::move(pv));
  }
  return p;
}

}  // namespace

std::string Expr::ToString() const {
  static const char* kOps[] = {"=", "!=", "<", "<=", ">", ">="};
  switch (kind) {
    case Kind::kTrue: return "true";
    case Kind::kFalse: return "false";
    case Kind::kAnd: return "(" + children[0]->ToString() + " AND " + children[1]->ToString() + ")";
    case Kind::kOr: return "(" + children[0]->ToString() + " OR " + children[1]->ToString() + ")";
    case Kind::kNot: return "NOT " + children[0]->ToString();
    case Kind::kIsNull: return column + " IS NULL";
    case Kind::kNotNull: return column + " IS NOT NULL";
    case Kind::kCompare:
      return fmt::format("{} {} {}", column, kOps[static_cast<int>(op)], literal_texts[0]);
    case Kind::kIn:
    case Kind::kNotIn: {
      std::string s = column + (kind == Kind::kIn ? " IN (" : " NOT IN (");
      for (size_t i = 0; i < literal_texts.size(); ++i) s += (i ? ", " : "") + literal_texts[i];
      return s + ")";
    }
  }
  return "?";
}

Result<ExprPtr> ParseFilter(std::string_view text) {
  Parser p(text);
  return p.Parse();
}

Result<ExprPtr> Bind(const ExprPtr& expr, const Schema& schema) {
  ASSIGN_OR_RETURN(ExprPtr bound, BindTree(expr, schema));
  return PushNot(bound, false);
}

void ReferencedFieldIds(const Expr& e, std::vector<int32_t>* ids) {
  for (const auto& c : e.children) ReferencedFieldIds(*c, ids);
  if (e.field_id != 0) ids->push_back(e.field_id);
}

Result<std::vector<bool>> EvaluateRows(const Expr& bound, const Batch& batch) {
  std::vector<bool> keep;
  RETURN_IF_ERROR(EvalInto(bound, batch, &keep));
  return keep;
}

bool FileMightMatch(const Expr& bound, const DataFile& file) {
  return WalkMightMatch(bound, [&](const Expr& e) {
    auto find = [&](const auto& m) -> std::optional<int64_t> {
      auto it = m.find(e.field_id);
      if (it == m.end()) return std::nullopt;
      return it->second;
    };
    auto values = find(file.value_counts);
    auto nulls = find(file.null_value_counts);
    bool may_have_null = !nulls || *nulls > 0;
    bool may_have_value = !(values && nulls && *values == *nulls);
    std::optional<std::string> lower, upper;
    if (auto it = file.lower_bounds.find(e.field_id); it != file.lower_bounds.end())
      lower = it->second;
    if (auto it = file.upper_bounds.find(e.field_id); it != file.upper_bounds.end())
      upper = it->second;
    // NaN values are outside the bounds: comparisons cannot prune float columns holding NaN.
    if (e.type && (e.type->id() == TypeId::kFloat || e.type->id() == TypeId::kDouble)) {
      auto nans = find(file.nan_value_counts);
      if (!nans || *nans > 0) may_have_value = true;
    }
    return RangeMightMatch(e, lower, upper, may_have_null, may_have_value);
  });
}

bool PartitionMightMatch(const Expr& bound, const PartitionSpec& spec, const Schema& schema,
                         const PartitionValues& values) {
  return WalkMightMatch(bound, [&](const Expr& e) {
    for (size_t i = 0; i < spec.fields.size() && i < values.size(); ++i) {
      if (spec.fields[i].source_id != e.field_id) continue;
      auto p = Project(e, spec.fields[i], schema);
      if (!p) continue;
      bool ok = values[i] ? PredicateOnValue(*p, *values[i]) : p->kind == Kind::kIsNull;
      if (!ok) return false;
    }
    return true;
  });
}

bool ManifestMightMatch(const Expr& bound, const PartitionSpec& spec, const Schema& schema,
                        const std::vector<FieldSummary>& summaries) {
  return WalkMightMatch(bound, [&](const Expr& e) {
    for (size_t i = 0; i < spec.fields.size() && i < summaries.size(); ++i) {
      if (spec.fields[i].source_id != e.field_id) continue;
      auto p = Project(e, spec.fields[i], schema);
      if (!p) continue;
      const FieldSummary& s = summaries[i];
      bool has_value = s.lower_bound.has_value() || s.contains_nan.value_or(false);
      if (!RangeMightMatch(*p, s.lower_bound, s.upper_bound, s.contains_null, has_value)) {
        return false;
      }
    }
    return true;
  });
}

}  // namespace sluice::iceberg
