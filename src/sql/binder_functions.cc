// ExprBinder::BindFunction: the scalar functions by name (binder_internal.h),
// their argument types and result types (docs/sql.md "Expressions").
#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "columnar/sql_schema.h"
#include "common/ascii.h"
#include "sql/binder_internal.h"
#include "sql/lexer.h"

namespace sluice::sql::internal {

using expr::NodePtr;
using expr::Op;

namespace {

struct FunctionInfo {
  size_t min_args, max_args;
};

const std::map<std::string, FunctionInfo, std::less<>>& Functions() {
  static const auto* kFunctions = new std::map<std::string, FunctionInfo, std::less<>>{
      {"lower", {1, 1}},       {"upper", {1, 1}},       {"length", {1, 1}},
      {"char_length", {1, 1}}, {"substring", {2, 3}},   {"substr", {2, 3}},
      {"trim", {1, 1}},        {"ltrim", {1, 1}},       {"rtrim", {1, 1}},
      {"concat", {1, 64}},     {"starts_with", {2, 2}}, {"regexp_matches", {2, 2}},
      {"abs", {1, 1}},         {"round", {1, 2}},       {"floor", {1, 1}},
      {"ceil", {1, 1}},        {"ceiling", {1, 1}},     {"date_trunc", {2, 2}},
      {"extract", {2, 2}},     {"coalesce", {1, 64}},   {"nullif", {2, 2}}};
  return *kFunctions;
}

}  // namespace

bool IsAggregateFunction(std::string_view fn) {
  for (std::string_view a : {"count", "sum", "avg", "min", "max", "approx_count_distinct"}) {
    if (fn == a) return true;
  }
  return false;
}

namespace {

Result<expr::TimeUnit> ParseUnit(const Expr& at, std::string_view text, bool for_extract) {
  std::string u = AsciiLower(text);
  if (u.size() > 1 && u.back() == 's' && u != "dows" && u != "doys") u.pop_back();
  using expr::TimeUnit;
  static const std::map<std::string, TimeUnit, std::less<>> kUnits = {
      {"microsecond", TimeUnit::kMicrosecond},
      {"millisecond", TimeUnit::kMillisecond},
      {"second", TimeUnit::kSecond},
      {"minute", TimeUnit::kMinute},
      {"hour", TimeUnit::kHour},
      {"day", TimeUnit::kDay},
      {"week", TimeUnit::kWeek},
      {"month", TimeUnit::kMonth},
      {"quarter", TimeUnit::kQuarter},
      {"year", TimeUnit::kYear},
      {"dow", TimeUnit::kDayOfWeek},
      {"doy", TimeUnit::kDayOfYear},
      {"epoch", TimeUnit::kEpoch}};
  auto it = kUnits.find(u);
  bool extract_only =
      it != kUnits.end() && (it->second == TimeUnit::kDayOfWeek ||
                             it->second == TimeUnit::kDayOfYear || it->second == TimeUnit::kEpoch);
  if (it == kUnits.end() || (extract_only && !for_extract)) {
    return ErrorAt(at.pos, "unknown {} unit '{}' (use {})", for_extract ? "extract" : "date_trunc",
                   text,
                   for_extract ? "year, quarter, month, week, day, hour, minute, second, "
                                 "millisecond, microsecond, dow, doy or epoch"
                               : "year, quarter, month, week, day, hour, minute, second, "
                                 "millisecond or microsecond");
  }
  return it->second;
}

}  // namespace

Result<ExprBinder::Typed> ExprBinder::BindFunction(const Expr& e) {
  const std::string& fn = e.op;
  if (IsAggregateFunction(fn)) {
    return NotSupportedAt(e.pos, "the aggregate {}() outside GROUP BY", fn);
  }
  auto info = Functions().find(fn);
  if (info == Functions().end()) {
    std::string known;
    for (const auto& [name, unused] : Functions()) known += (known.empty() ? "" : ", ") + name;
    return ErrorAt(e.pos, "unknown function {}() (known: {})", fn, known);
  }
  if (e.distinct) return ErrorAt(e.pos, "DISTINCT is only allowed in aggregates");
  if (fn == "coalesce" || fn == "nullif") {
    if (e.args.size() < info->second.min_args || e.args.size() > info->second.max_args) {
      return ErrorAt(e.pos, "{}() takes {} arguments, got {}", fn,
                     fn == "nullif" ? "2" : "at least 1", e.args.size());
    }
    ASSIGN_OR_RETURN(auto bound, BindCommon(e));
    return Typed{Call(e, fn == "coalesce" ? Op::kCoalesce : Op::kNullIf, bound.second,
                      std::move(bound.first)),
                 nullptr};
  }
  if (fn == "date_trunc" || fn == "extract") {
    bool is_extract = fn == "extract";
    if (e.args.size() != 2) return ErrorAt(e.pos, "{}() takes 2 arguments", fn);
    const Expr& unit = e.args[0];
    if (unit.kind != Expr::Kind::kLiteral || unit.literal.kind != Literal::Kind::kString) {
      return ErrorAt(unit.pos, "the unit of {}() must be a 'string' such as 'minute'", fn);
    }
    ASSIGN_OR_RETURN(expr::TimeUnit u, ParseUnit(unit, unit.literal.text, is_extract));
    ASSIGN_OR_RETURN(Typed x, BindAny(e.args[1]));
    if (!x.node || !(IsTimestampType(x.type()->id()) || x.type()->id() == TypeId::kDate)) {
      return ErrorAt(e.args[1].pos, "{}() needs a DATE, TIMESTAMP or TIMESTAMPTZ, {} is {}", fn,
                     e.args[1].text, SqlTypeName(x.type()));
    }
    NodePtr ts = x.node;
    if (ts->type->id() == TypeId::kDate) {
      ts = Call(e.args[1], Op::kCast, DataType::Timestamp(), {ts});
    }
    auto n =
        std::const_pointer_cast<expr::Node>(Call(e, is_extract ? Op::kExtract : Op::kDateTrunc,
                                                 is_extract ? DataType::Long() : ts->type, {ts}));
    n->unit = u;
    return Typed{n, nullptr};
  }
  ASSIGN_OR_RETURN(std::vector<NodePtr> args,
                   BindArgs(e, info->second.min_args, info->second.max_args));
  auto need = [&](size_t i, bool ok, std::string_view what) -> Status {
    if (ok) return Status::OK();
    return ErrorAt(e.args[i].pos, "{}() needs {}, {} is {}", fn, what, e.args[i].text,
                   SqlTypeName(args[i]->type));
  };
  auto is_string = [&](size_t i) { return args[i]->type->id() == TypeId::kString; };
  auto to_long = [&](size_t i) -> Status {
    RETURN_IF_ERROR(need(i, IsIntegerType(args[i]->type->id()), "a whole number"));
    if (args[i]->type->id() == TypeId::kInt) {
      args[i] = Call(e.args[i], Op::kCast, DataType::Long(), {args[i]});
    }
    return Status::OK();
  };
  static const std::map<std::string, Op, std::less<>> kStringOps = {{"lower", Op::kLower},
                                                                    {"upper", Op::kUpper},
                                                                    {"trim", Op::kTrim},
                                                                    {"ltrim", Op::kLTrim},
                                                                    {"rtrim", Op::kRTrim}};
  if (auto it = kStringOps.find(fn); it != kStringOps.end()) {
    RETURN_IF_ERROR(need(0, is_string(0), "a STRING"));
    return Typed{Call(e, it->second, DataType::String(), args), nullptr};
  }
  if (fn == "length" || fn == "char_length") {
    RETURN_IF_ERROR(need(0, is_string(0), "a STRING"));
    return Typed{Call(e, Op::kLength, DataType::Long(), args), nullptr};
  }
  if (fn == "substring" || fn == "substr") {
    RETURN_IF_ERROR(need(0, is_string(0), "a STRING"));
    for (size_t i = 1; i < args.size(); ++i) RETURN_IF_ERROR(to_long(i));
    return Typed{Call(e, Op::kSubstring, DataType::String(), args), nullptr};
  }
  if (fn == "concat") {
    for (size_t i = 0; i < args.size(); ++i) {
      if (!is_string(i)) args[i] = Call(e.args[i], Op::kCast, DataType::String(), {args[i]});
    }
    return Typed{Call(e, Op::kConcatSkipNull, DataType::String(), args), nullptr};
  }
  if (fn == "starts_with") {
    RETURN_IF_ERROR(need(0, is_string(0), "a STRING"));
    RETURN_IF_ERROR(need(1, is_string(1), "a STRING"));
    return Typed{Call(e, Op::kStartsWith, DataType::Boolean(), args), nullptr};
  }
  if (fn == "regexp_matches") {
    RETURN_IF_ERROR(need(0, is_string(0), "a STRING"));
    const Expr& p = e.args[1];
    if (p.kind != Expr::Kind::kLiteral || p.literal.kind != Literal::Kind::kString) {
      return NotSupportedAt(p.pos, "regexp_matches() with a pattern that is not a 'string'");
    }
    re2::RE2::Options options;
    options.set_log_errors(false);
    auto re = std::make_shared<re2::RE2>(p.literal.text, options);
    if (!re->ok()) return ErrorAt(p.pos, "invalid regular expression: {}", re->error());
    auto n = std::const_pointer_cast<expr::Node>(
        Call(e, Op::kRegexpMatches, DataType::Boolean(), {args[0]}));
    n->regex = std::move(re);
    return Typed{n, nullptr};
  }
  // Math.
  RETURN_IF_ERROR(need(0, IsNumericType(args[0]->type->id()), "a number"));
  TypePtr type = args[0]->type;
  if (type->id() == TypeId::kFloat) {
    type = DataType::Double();
    args[0] = Call(e.args[0], Op::kCast, type, {args[0]});
  }
  if (fn == "abs") return Typed{Call(e, Op::kAbs, type, {args[0]}), nullptr};
  if (fn == "floor" || fn == "ceil" || fn == "ceiling") {
    if (type->id() == TypeId::kDecimal) {
      type = DataType::Decimal(std::min(38, type->precision() - type->scale() + 1), 0);
    }
    return Typed{Call(e, fn == "floor" ? Op::kFloor : Op::kCeil, type, {args[0]}), nullptr};
  }
  // round(x[, digits]): digits an integer literal.
  int digits = 0;
  if (args.size() > 1) {
    const Expr& d = e.args[1];
    std::string_view text = d.literal.text;
    if (d.kind != Expr::Kind::kLiteral || d.literal.kind != Literal::Kind::kNumber ||
        text.find_first_of(".eE") != std::string_view::npos || text.size() > 4) {
      return ErrorAt(d.pos, "the digits of round() must be a whole number literal");
    }
    digits = std::stoi(std::string(text));
  }
  if (type->id() == TypeId::kDecimal && digits < type->scale()) {
    int scale = std::max(digits, 0);
    type = DataType::Decimal(
        std::min(38, std::max(1, type->precision() - type->scale() + scale + 1)), scale);
  }
  auto n = std::const_pointer_cast<expr::Node>(Call(e, Op::kRound, type, {args[0]}));
  n->round_digits = digits;
  return Typed{n, nullptr};
}

}  // namespace sluice::sql::internal
