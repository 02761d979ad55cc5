#include "io/s3/s3_options.h"

#include <cstdlib>
#include <fstream>
#include <map>

namespace sluice::s3 {
namespace {

using Section = std::map<std::string, std::string>;
using IniFile = std::map<std::string, Section>;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// The AWS shared config format: "[section]" headers, "key = value" lines, '#' or
// ';' comments, and indented "key = value" lines under a "parent =" line (the
// service blocks, such as "s3 =\n  addressing_style = path"), kept as
// "parent.key". A file that does not exist is empty.
IniFile ReadIni(const std::string& path) {
  IniFile ini;
  std::ifstream in(path);
  std::string line, section, parent;
  while (std::getline(in, line)) {
    bool indented = !line.empty() && (line[0] == ' ' || line[0] == '\t');
    std::string_view l = Trim(line);
    if (l.empty() || l[0] == '#' || l[0] == ';') continue;
    if (l.front() == '[' && l.back() == ']') {
      section = std::string(Trim(l.substr(1, l.size() - 2)));
      parent.clear();
      continue;
    }
    size_t eq = l.find('=');
    if (eq == std::string_view::npos) continue;
    std::string key(Trim(l.substr(0, eq)));
    std::string value(Trim(l.substr(eq + 1)));
    if (indented && !parent.empty()) {
      ini[section][parent + "." + key] = value;
    } else if (value.empty()) {
      parent = key;
    } else {
      parent.clear();
      ini[section][key] = value;
    }
  }
  return ini;
}

std::string HomeFile(const Getenv& env, std::string_view override_var, std::string_view name) {
  if (auto v = env(override_var)) return *v;
  auto home = env("HOME");
  return home ? *home + "/.aws/" + std::string(name) : std::string();
}

Result<int64_t> IntOption(const Getenv& env, std::string_view name, int64_t fallback) {
  auto v = env(name);
  if (!v) return fallback;
  char* end = nullptr;
  long long n = std::strtoll(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0' || n <= 0) {
    return Status::Invalid("{}='{}': expected a positive integer", name, *v);
  }
  return static_cast<int64_t>(n);
}

}  // namespace

std::string S3Options::BucketUrl(std::string_view bucket) const {
  // A bucket name with dots does not match AWS's wildcard certificate as a
  // virtual host: path style for it, as the AWS SDKs do.
  if (path_style || (endpoint.empty() && bucket.find('.') != std::string_view::npos)) {
    std::string base =
        endpoint.empty() ? fmt::format("https://s3.{}.amazonaws.com", region) : endpoint;
    return fmt::format("{}/{}", base, bucket);
  }
  if (endpoint.empty()) return fmt::format("https://{}.s3.{}.amazonaws.com", bucket, region);
  size_t scheme = endpoint.find("://");
  size_t host = scheme == std::string::npos ? 0 : scheme + 3;
  return fmt::format("{}{}.{}", endpoint.substr(0, host), bucket, endpoint.substr(host));
}

Getenv ProcessEnvironment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
}

Result<S3Options> OptionsFromEnvironment(const Getenv& env) {
  S3Options o;
  std::string profile = env("AWS_PROFILE").value_or("default");
  std::string credentials_file = HomeFile(env, "AWS_SHARED_CREDENTIALS_FILE", "credentials");
  std::string config_file = HomeFile(env, "AWS_CONFIG_FILE", "config");
  IniFile credentials = credentials_file.empty() ? IniFile{} : ReadIni(credentials_file);
  IniFile config = config_file.empty() ? IniFile{} : ReadIni(config_file);
  const Section& creds = credentials[profile];
  const Section& conf = config[profile == "default" ? profile : "profile " + profile];
  auto lookup = [](const Section& s, const std::string& key) -> std::optional<std::string> {
    auto it = s.find(key);
    if (it == s.end() || it->second.empty()) return std::nullopt;
    return it->second;
  };

  if (auto id = env("AWS_ACCESS_KEY_ID")) {
    o.credentials.access_key_id = *id;
    o.credentials.secret_access_key = env("AWS_SECRET_ACCESS_KEY").value_or("");
    o.credentials.session_token = env("AWS_SESSION_TOKEN").value_or("");
  } else {
    for (const Section* s : {&creds, &conf}) {
      if (auto id = lookup(*s, "aws_access_key_id")) {
        o.credentials.access_key_id = *id;
        o.credentials.secret_access_key = lookup(*s, "aws_secret_access_key").value_or("");
        o.credentials.session_token = lookup(*s, "aws_session_token").value_or("");
        break;
      }
    }
  }
  if (o.credentials.access_key_id.empty() || o.credentials.secret_access_key.empty()) {
    return Status::Invalid(
        "S3: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or profile '{}' "
        "in {} or {}",
        profile, credentials_file.empty() ? "~/.aws/credentials" : credentials_file,
        config_file.empty() ? "~/.aws/config" : config_file);
  }

  if (auto r = env("AWS_REGION")) {
    o.region = *r;
  } else if (auto r2 = env("AWS_DEFAULT_REGION")) {
    o.region = *r2;
  } else if (auto r3 = lookup(conf, "region")) {
    o.region = *r3;
  }

  std::optional<std::string> endpoint = env("AWS_ENDPOINT_URL_S3");
  if (!endpoint) endpoint = env("AWS_ENDPOINT_URL");
  if (!endpoint) endpoint = lookup(conf, "s3.endpoint_url");
  if (!endpoint) endpoint = lookup(conf, "endpoint_url");
  if (endpoint) {
    std::string e = *endpoint;
    while (!e.empty() && e.back() == '/') e.pop_back();
    if (e.rfind("http://", 0) != 0 && e.rfind("https://", 0) != 0) {
      return Status::Invalid("S3 endpoint '{}': expected http://HOST[:PORT] or https://...", e);
    }
    // The scheme's default port: curl leaves it out of the Host header, and the
    // signed host must be what is sent.
    if (e.starts_with("http://") && e.ends_with(":80")) e.resize(e.size() - 3);
    if (e.starts_with("https://") && e.ends_with(":443")) e.resize(e.size() - 4);
    o.endpoint = e;
    o.path_style = true;
  }
  if (auto style = lookup(conf, "s3.addressing_style")) {
    if (*style == "path") {
      o.path_style = true;
    } else if (*style == "virtual") {
      o.path_style = false;
    } else if (*style != "auto") {
      return Status::Invalid("S3 addressing_style '{}' in {}: expected path, virtual or auto",
                             *style, config_file);
    }
  }

  ASSIGN_OR_RETURN(int64_t attempts, IntOption(env, "SLUICE_S3_MAX_ATTEMPTS", o.max_attempts));
  o.max_attempts = static_cast<int>(attempts);
  ASSIGN_OR_RETURN(o.connect_timeout_ms,
                   IntOption(env, "SLUICE_S3_CONNECT_TIMEOUT_MS", o.connect_timeout_ms));
  ASSIGN_OR_RETURN(o.request_timeout_ms,
                   IntOption(env, "SLUICE_S3_REQUEST_TIMEOUT_MS", o.request_timeout_ms));
  ASSIGN_OR_RETURN(o.part_size, IntOption(env, "SLUICE_S3_PART_SIZE", o.part_size));
  if (o.part_size < (5 << 20)) {
    return Status::Invalid("SLUICE_S3_PART_SIZE={}: S3 parts are at least 5 MiB (5242880)",
                           o.part_size);
  }
  return o;
}

}  // namespace sluice::s3
