#include "sql/parser.h"

#include <algorithm>
#include <cctype>

#include "common/ascii.h"
#include "sql/parser_internal.h"

namespace sluice::sql {
namespace internal {
namespace {

// Transforms iceberg::ParsePartitionSpec knows, with their argument counts.
int TransformArity(const std::string& fn) {
  if (fn == "bucket" || fn == "truncate") return 2;
  if (fn == "identity" || fn == "year" || fn == "month" || fn == "day" || fn == "hour" ||
      fn == "void") {
    return 1;
  }
  return 0;
}

}  // namespace

Result<Script> Parser::ParseAll() {
  Script script;
  while (true) {
    while (AcceptSymbol(";")) {
    }
    if (Peek().kind == TokenKind::kEnd) break;
    // Parsed in place: moving a statement's variant trips a false
    // -Wmaybe-uninitialized in GCC 12.
    RETURN_IF_ERROR(ParseStatement(&script.statements.emplace_back()));
    if (Peek().kind == TokenKind::kEnd) break;
    RETURN_IF_ERROR(ExpectSymbol(";", "after the statement"));
  }
  return script;
}

Status Parser::ParseStatement(Statement* out) {
  Statement& stmt = *out;
  stmt.pos = Peek().pos;
  if (!AcceptKeyword("CREATE")) {
    return Expected("a statement (CREATE TABLE, CREATE SOURCE or CREATE PIPELINE)");
  }
  if (AcceptKeyword("TABLE")) {
    ASSIGN_OR_RETURN(stmt.body, ParseCreateTable());
  } else if (AcceptKeyword("SOURCE")) {
    ASSIGN_OR_RETURN(stmt.body, ParseCreateSource());
  } else if (AcceptKeyword("PIPELINE")) {
    ASSIGN_OR_RETURN(stmt.body, ParseCreatePipeline());
  } else {
    return Expected("TABLE, SOURCE or PIPELINE after CREATE");
  }
  return Status::OK();
}

Result<bool> Parser::ParseIfNotExists() {
  if (!AcceptKeyword("IF")) return false;
  RETURN_IF_ERROR(ExpectKeyword("NOT", "after IF"));
  RETURN_IF_ERROR(ExpectKeyword("EXISTS", "after IF NOT"));
  return true;
}

Result<CreateTable> Parser::ParseCreateTable() {
  CreateTable table;
  ASSIGN_OR_RETURN(table.if_not_exists, ParseIfNotExists());
  ASSIGN_OR_RETURN(table.name, ParseQualifiedName("a table name"));
  std::vector<Identifier> primary_key;
  ASSIGN_OR_RETURN(table.schema, ParseColumnList(nullptr, &primary_key));
  if (AcceptKeyword("PARTITIONED")) {
    RETURN_IF_ERROR(ExpectKeyword("BY", "after PARTITIONED"));
    RETURN_IF_ERROR(ExpectSymbol("(", "after PARTITIONED BY"));
    do {
      ASSIGN_OR_RETURN(auto term, ParsePartitionTerm(table.schema));
      table.partition_by.push_back(std::move(term));
    } while (AcceptSymbol(","));
    RETURN_IF_ERROR(ExpectSymbol(")", "after the PARTITIONED BY terms"));
  }
  if (AcceptKeyword("WITH")) {
    ASSIGN_OR_RETURN(table.options, ParseOptions());
  }
  return table;
}

Result<CreateSource> Parser::ParseCreateSource() {
  CreateSource source;
  ASSIGN_OR_RETURN(source.if_not_exists, ParseIfNotExists());
  ASSIGN_OR_RETURN(source.name, ParseQualifiedName("a source name"));
  if (AcceptKeyword("FROM")) {
    RETURN_IF_ERROR(ParseTableSource(&source));
    return source;
  }
  ASSIGN_OR_RETURN(source.schema, ParseColumnList(&source.watermark));
  RETURN_IF_ERROR(ExpectKeyword("WITH", "after the source's column list"));
  ASSIGN_OR_RETURN(source.options, ParseOptions());
  RETURN_IF_ERROR(ExpectKeyword("FORMAT", "after the source's options"));
  const Token& format = Peek();
  if (format.kind != TokenKind::kIdentifier || IsReservedWord(format)) {
    return Expected("a format name after FORMAT");
  }
  Next();
  source.format = AsciiLower(format.text);
  if (source.format != "json" && source.format != "upsert" && source.format != "debezium") {
    return NotSupportedAt(format.pos, "FORMAT {}", format.text);
  }
  return source;
}

Status Parser::ParseTableSource(CreateSource* source) {
  // FROM TABLE t [(WATERMARK FOR ...)] [WITH (...)]: the columns are the table's.
  RETURN_IF_ERROR(ExpectKeyword("TABLE", "after FROM"));
  ASSIGN_OR_RETURN(QualifiedName table, ParseQualifiedName("a table name after FROM TABLE"));
  source->from_table = std::move(table);
  if (Peek().IsSymbol("(")) {
    SourcePos at = Peek().pos;
    ASSIGN_OR_RETURN(Schema columns, ParseColumnList(&source->watermark));
    if (!columns.fields.empty()) {
      return ErrorAt(at,
                     "a source FROM TABLE takes its columns from the table: only a WATERMARK may "
                     "be given here");
    }
  }
  if (AcceptKeyword("WITH")) {
    ASSIGN_OR_RETURN(source->options, ParseOptions());
  }
  if (Peek().IsKeyword("FORMAT")) {
    return ErrorAt(Peek().pos, "a source FROM TABLE has no FORMAT (it reads the table's rows)");
  }
  return Status::OK();
}

Result<CreatePipeline> Parser::ParseCreatePipeline() {
  CreatePipeline pipeline;
  ASSIGN_OR_RETURN(pipeline.if_not_exists, ParseIfNotExists());
  ASSIGN_OR_RETURN(pipeline.name, ParseQualifiedName("a pipeline name"));
  if (AcceptKeyword("WITH")) {
    ASSIGN_OR_RETURN(pipeline.options, ParseOptions());
  }
  RETURN_IF_ERROR(ExpectKeyword("AS", "before the pipeline's INSERT"));
  ASSIGN_OR_RETURN(pipeline.insert, ParseInsert());
  return pipeline;
}

Result<Options> Parser::ParseOptions() {
  Options options;
  RETURN_IF_ERROR(ExpectSymbol("(", "after WITH"));
  do {
    Option option;
    const Token& key = Peek();
    option.pos = key.pos;
    if (key.kind == TokenKind::kIdentifier) {
      option.key = AsciiLower(Next().text);
      while (Peek().IsSymbol(".") && Peek(1).kind == TokenKind::kIdentifier) {  // write.format
        Next();
        option.key += "." + AsciiLower(Next().text);
      }
    } else if (key.kind == TokenKind::kString || key.kind == TokenKind::kQuotedIdentifier) {
      option.key = Next().text;
    } else {
      return Expected("an option name");
    }
    if (options.Find(option.key) != nullptr) {
      return ErrorAt(option.pos, "duplicate option '{}'", option.key);
    }
    RETURN_IF_ERROR(ExpectSymbol("=", fmt::format("after option '{}'", option.key)));
    bool negative = AcceptSymbol("-");
    const Token& value = Peek();
    if (value.kind == TokenKind::kNumber) {
      option.kind = Option::ValueKind::kNumber;
      option.value = (negative ? "-" : "") + value.text;
    } else if (negative) {
      return Expected(fmt::format("a number after '-' in option '{}'", option.key));
    } else if (value.kind == TokenKind::kString) {
      option.kind = Option::ValueKind::kString;
      option.value = value.text;
    } else if (value.kind == TokenKind::kIdentifier) {
      option.kind = Option::ValueKind::kIdentifier;
      option.value = value.text;
    } else {
      return Expected(fmt::format("a value for option '{}'", option.key));
    }
    Next();
    options.items.push_back(std::move(option));
  } while (AcceptSymbol(","));
  RETURN_IF_ERROR(ExpectSymbol(")", "after the options"));
  return options;
}

Result<CreateTable::PartitionTerm> Parser::ParsePartitionTerm(const Schema& schema) {
  CreateTable::PartitionTerm term;
  term.pos = Peek().pos;
  if (Peek().kind == TokenKind::kIdentifier && Peek(1).IsSymbol("(")) {
    const Token& fn_token = Next();
    std::string fn = AsciiLower(fn_token.text);
    int arity = TransformArity(fn);
    if (arity == 0) {
      return ErrorAt(fn_token.pos,
                     "unknown partition transform '{}' (identity, bucket, truncate, year, month, "
                     "day, hour, void)",
                     fn_token.text);
    }
    Next();  // (
    std::string args;
    if (arity == 2) {
      const Token& n = Peek();
      if (n.kind != TokenKind::kNumber || n.text.find_first_not_of("0123456789") != n.text.npos) {
        return Expected(fmt::format("a whole number as the first argument of {}()", fn));
      }
      args = Next().text;
      RETURN_IF_ERROR(ExpectSymbol(",", fmt::format("after the width in {}()", fn)));
      args += ", ";
    }
    ASSIGN_OR_RETURN(QualifiedName column, ParseQualifiedName("a column name"));
    ASSIGN_OR_RETURN(std::string resolved, ResolvePartitionColumn(column, schema));
    args += resolved;
    RETURN_IF_ERROR(ExpectSymbol(")", fmt::format("after the arguments of {}()", fn)));
    term.text = fmt::format("{}({})", fn, args);
    return term;
  }
  ASSIGN_OR_RETURN(QualifiedName column, ParseQualifiedName("a partition column or transform"));
  ASSIGN_OR_RETURN(term.text, ResolvePartitionColumn(column, schema));
  return term;
}

Result<std::string> Parser::ResolvePartitionColumn(const QualifiedName& name,
                                                   const Schema& schema) {
  if (name.parts.size() == 1 && !name.parts[0].quoted) {
    for (const Field& f : schema.fields) {
      if (EqualsIgnoreCase(f.name, name.parts[0].name)) return f.name;
    }
  } else if (schema.FindByPath(name.ToString()) != nullptr) {
    return name.ToString();
  }
  return ErrorAt(name.pos(), "PARTITIONED BY names no column '{}'", name.ToString());
}

Result<Identifier> Parser::ParseIdentifier(std::string_view what) {
  const Token& t = Peek();
  if (t.kind != TokenKind::kIdentifier && t.kind != TokenKind::kQuotedIdentifier) {
    return Expected(what);
  }
  Next();
  return Identifier{t.text, t.kind == TokenKind::kQuotedIdentifier, t.pos};
}

Result<QualifiedName> Parser::ParseQualifiedName(std::string_view what) {
  QualifiedName name;
  ASSIGN_OR_RETURN(Identifier first, ParseIdentifier(what));
  name.parts.push_back(std::move(first));
  while (AcceptSymbol(".")) {
    ASSIGN_OR_RETURN(Identifier part, ParseIdentifier(fmt::format("a name after '.'")));
    name.parts.push_back(std::move(part));
  }
  return name;
}

}  // namespace internal

Result<Script> ParseScript(std::string_view text) {
  ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(text));
  return internal::Parser(text, std::move(tokens)).ParseAll();
}

}  // namespace sluice::sql
