// The syntax tree of a sluice SQL script, as produced by ParseScript (parser.h).
//
// A Script is a list of Statements; each node that a later stage may report an
// error about carries its SourcePos (1-based line and column of its first
// token, columns counted in bytes). Names keep their spelling; `quoted` tells
// whether an identifier was written "quoted" (match it exactly) or bare (match
// it case-insensitively). Column lists are already typed: they are sluice
// Schemas with fresh Iceberg field ids (1..n, as columnar::ParseColumnList
// assigns them). The tree owns all its data (no views into the script text);
// expressions are move-only.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "columnar/types.h"

namespace sluice::sql {

struct SourcePos {
  int line = 0;
  int column = 0;
  bool operator==(const SourcePos&) const = default;
};

struct Identifier {
  std::string name;     // as written, without quotes
  bool quoted = false;  // "Name" (exact) rather than Name (case-insensitive)
  SourcePos pos;
};

// A possibly qualified name: lake.events, catalog.db.events.
struct QualifiedName {
  std::vector<Identifier> parts;
  SourcePos pos() const { return parts.empty() ? SourcePos{} : parts.front().pos; }
  // The parts joined with '.': "lake.events".
  std::string ToString() const;
};

// WITH (key = value, ...). Bare-word keys, dotted or not, are lowercased
// ("Connector" → "connector", write.Format → "write.format"); 'quoted' keys are
// kept as written. Values keep their text:
// 'strings' unescaped, numbers and bare words as written.
struct Option {
  enum class ValueKind { kString, kNumber, kIdentifier };
  std::string key;
  std::string value;
  ValueKind kind = ValueKind::kString;
  SourcePos pos;  // of the key
};

struct Options {
  std::vector<Option> items;  // in script order; keys are unique
  const Option* Find(std::string_view key) const;
  std::map<std::string, std::string> ToMap() const;
};

struct Literal {
  enum class Kind { kNull, kBoolean, kNumber, kString };
  Kind kind = Kind::kNull;
  // kNumber: the number as written ("-12", "1.5e3"); kString: the unescaped
  // value; kBoolean: "true" or "false"; kNull: empty.
  std::string text;
};

// An expression (docs/sql.md "Expressions"). Operators and functions keep
// their spelling in `op`: binary "+", "-", "*", "/", "%", "||", "=", "<>", "<",
// "<=", ">", ">=", "AND", "OR"; unary "-", "NOT"; functions their lowercased
// name. Operands are in `args`:
//   kUnary      {operand}
//   kBinary     {left, right}
//   kFunction   the arguments; count(*) has one kStar argument; `distinct`
//               for f(DISTINCT x); extract(unit FROM x) is "extract" with a
//               string literal unit and x; substring(s FROM a FOR b) is
//               "substring"(s, a, b)
//   kCase       [operand if case_operand], when_1, then_1, ..., [else if case_else]
//   kIn         {value, item_1, ..., item_n}  (`negated`: NOT IN)
//   kBetween    {value, low, high}            (`negated`: NOT BETWEEN)
//   kLike       {value, pattern[, escape]}    (`negated`: NOT LIKE)
//   kIsNull     {value}                       (`negated`: IS NOT NULL)
//   kInterval   INTERVAL 'text' [unit]: literal.text is the quoted text, op
//               the unit uppercased ("SECOND"), or empty when the text holds it
// `text` is the expression as written (for messages); `height` the depth of
// the tree below this node (1 for a leaf).
struct Expr {
  enum class Kind {
    kStar,
    kColumn,
    kLiteral,
    kCast,
    kUnary,
    kBinary,
    kFunction,
    kCase,
    kIn,
    kBetween,
    kLike,
    kIsNull,
    kInterval
  };
  Kind kind = Kind::kLiteral;
  SourcePos pos;
  QualifiedName column;           // kColumn: col or source.col
  Literal literal;                // kLiteral, kInterval
  std::unique_ptr<Expr> operand;  // kCast
  TypePtr cast_type;              // kCast (nested field ids are 0)
  std::string cast_type_text;     // kCast: the type as written, for messages
  bool try_cast = false;          // kCast: TRY_CAST
  std::string op;
  std::vector<Expr> args;
  bool negated = false;
  bool distinct = false;
  bool case_operand = false, case_else = false;
  std::string text;
  int height = 1;
};

struct SelectItem {
  Expr expr;
  std::string alias;  // empty when there is no AS alias
  SourcePos pos;      // of the item's first token
};

// A window table function in FROM: TUMBLE(src, ts, size), HOP(src, ts, slide,
// size), SESSION(src, ts, gap), or Flink's TABLE(TUMBLE(TABLE src,
// DESCRIPTOR(ts), size)) spellings of the same.
struct WindowClause {
  enum class Kind { kTumble, kHop, kSession };
  Kind kind = Kind::kTumble;
  SourcePos pos;
  Identifier time_column;
  std::vector<Expr> intervals;  // tumble: size; hop: slide, size; session: gap
};

// INSERT INTO target [(col, ...)] SELECT items FROM source [WHERE ...]
// [GROUP BY ...] [HAVING ...]
struct InsertSelect {
  QualifiedName target;
  std::vector<Identifier> columns;  // the explicit INSERT column list, or empty
  std::vector<SelectItem> items;
  QualifiedName source;
  std::unique_ptr<Expr> where;           // WHERE, or null
  std::unique_ptr<WindowClause> window;  // FROM a window function, or null
  std::vector<Expr> group_by;
  std::unique_ptr<Expr> having;
  SourcePos pos;         // of INSERT
  SourcePos select_pos;  // of SELECT
};

struct CreateTable {
  QualifiedName name;
  bool if_not_exists = false;
  Schema schema;
  // PARTITIONED BY terms, each normalized to the form iceberg::ParsePartitionSpec
  // accepts: "day(ts)", "bucket(16, id)", "kind". Bare column names are spelled
  // as in the column list.
  struct PartitionTerm {
    std::string text;
    SourcePos pos;
  };
  std::vector<PartitionTerm> partition_by;
  Options options;
  // The terms joined with ", ": the text for iceberg::ParsePartitionSpec ("" when
  // unpartitioned).
  std::string PartitionSpecText() const;
};

// WATERMARK FOR column AS column [- INTERVAL ...] in a source's column list.
struct Watermark {
  Identifier column;
  std::shared_ptr<const Expr> expr;  // shared: sources are copied
  SourcePos pos;
};

struct CreateSource {
  QualifiedName name;
  bool if_not_exists = false;
  Schema schema;  // FROM TABLE: empty until bound (the table's columns)
  std::optional<Watermark> watermark;
  std::optional<QualifiedName> from_table;  // CREATE SOURCE s FROM TABLE lake.events
  Options options;                          // connector = 'http' | 'kafka', brokers, topic, ...
  std::string format;  // lowercased FORMAT: "json", "upsert", "debezium" (empty FROM TABLE)
};

struct CreatePipeline {
  QualifiedName name;
  bool if_not_exists = false;
  Options options;  // commit_interval = '1s', ...
  InsertSelect insert;
};

struct Statement {
  SourcePos pos;  // of the statement's first token
  std::variant<CreateTable, CreateSource, CreatePipeline> body;
};

struct Script {
  std::vector<Statement> statements;
};

}  // namespace sluice::sql
