// Binding SQL statements to sluice objects: table and source names, WITH
// options, and a CREATE PIPELINE's INSERT ... SELECT against its source's
// definition and its target table (sql/binder.h does the column work). Used by
// the runtime and by `sluice dlq replay`. Errors name the script's line and
// column.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.h"
#include "io/file_io.h"
#include "pipeline/pipeline.h"
#include "sql/ast.h"

namespace sluice::pipeline {

// "line L, column C"
std::string Where(const sql::SourcePos& pos);
// A table name: at least a namespace and a name; bare parts are lowercased.
Result<catalog::TableIdent> TableName(const sql::QualifiedName& q);
// A one-part name (source, pipeline); bare names are lowercased.
Result<std::string> SimpleName(const sql::QualifiedName& q, const char* what);
// Refuses options outside `allowed`, naming the known ones.
Status CheckOptions(const sql::Options& o, const std::vector<std::string_view>& allowed,
                    const char* what);
// Parses a duration such as "250ms", "1s", "1.5s", "15m", "1h" into milliseconds;
// kInvalidArgument outside 1 ms to 7 days (no silent overflow).
Result<int64_t> ParseDurationMs(const std::string& text);
// Parses a size such as "64MiB", "1GiB", "500MB", "4096" (bytes) into bytes.
Result<int64_t> ParseByteSize(const std::string& text);

// Checks a CREATE SOURCE: a known connector with its required options and no
// unknown ones, FORMAT JSON (none for FROM TABLE).
Status CheckSource(const sql::CreateSource& source);

// A source's connector name ("table" for FROM TABLE) and its options as a map
// (for FROM TABLE with table = "ns.name"). The source must have passed CheckSource.
std::string ConnectorOf(const sql::CreateSource& source);
std::map<std::string, std::string> ConnectorOptions(const sql::CreateSource& source);

// The options of a pipeline from its statement: name, target, source name and
// decoding schema, the bound projection, commit interval. `sources` maps
// source names to their definitions. The target table must exist, or be in
// `planned` ("ns.name" -> schema: tables about to be created). state_dir is
// left empty.
Result<PipelineOptions> BindPipeline(catalog::Catalog& catalog, FileIO& io,
                                     const sql::CreatePipeline& statement,
                                     const std::map<std::string, sql::CreateSource>& sources,
                                     const std::map<std::string, Schema>* planned = nullptr);

// The CREATE SOURCE statements of a script by (lowercased) name.
Result<std::map<std::string, sql::CreateSource>> SourcesOf(const sql::Script& script);
// The CREATE PIPELINE statement named `name` (kNotFound listing the others).
Result<const sql::CreatePipeline*> FindPipeline(const sql::Script& script, const std::string& name);

}  // namespace sluice::pipeline
