#include "sim/swf.h"

#include "core/number_text.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <unordered_map>

namespace trellis {

namespace {

constexpr std::array<std::string_view, kSwfFieldCount> kFieldNames = {"Job Number",
                                                                      "Submit Time",
                                                                      "Wait Time",
                                                                      "Run Time",
                                                                      "Allocated Processors",
                                                                      "Average CPU Time",
                                                                      "Used Memory",
                                                                      "Requested Processors",
                                                                      "Requested Time",
                                                                      "Requested Memory",
                                                                      "Status",
                                                                      "User ID",
                                                                      "Group ID",
                                                                      "Executable Number",
                                                                      "Queue Number",
                                                                      "Partition Number",
                                                                      "Preceding Job Number",
                                                                      "Think Time"};

// Fields that may hold fractions (times); every other field is a whole number.
bool fractional(int field) {
  switch (static_cast<SwfField>(field)) {
    case SwfField::kSubmitTime:
    case SwfField::kWaitTime:
    case SwfField::kRunTime:
    case SwfField::kAverageCpuTime:
    case SwfField::kRequestedTime:
    case SwfField::kThinkTime:
      return true;
    default:
      return false;
  }
}

// The header keys SWF defines (v2.2 and those seen in the archive's files).
constexpr std::array<std::string_view, 26> kHeaderKeys = {
    "Version",    "Computer",       "Installation",  "Acknowledge",  "Information",
    "Conversion", "MaxJobs",        "MaxRecords",    "Preemption",   "UnixStartTime",
    "TimeZone",   "TimeZoneString", "StartTime",     "EndTime",      "MaxNodes",
    "MaxProcs",   "MaxRuntime",     "MaxMemory",     "AllowOveruse", "MaxQueues",
    "Queues",     "Queue",          "MaxPartitions", "Partitions",   "Partition",
    "Note"};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// "; Key: value" -> (Key, value); any other comment -> ("", text). An error for "; Word: ..."
// where Word looks like a key but is not one SWF defines.
Result<std::pair<std::string, std::string>> parse_header(std::string_view body) {
  std::string_view text = trim(body);
  size_t colon = text.find(':');
  if (colon != std::string_view::npos && colon > 0) {
    std::string_view key = text.substr(0, colon);
    bool word = std::all_of(key.begin(), key.end(),
                            [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
    if (word && std::isupper(static_cast<unsigned char>(key.front()))) {
      if (std::find(kHeaderKeys.begin(), kHeaderKeys.end(), key) == kHeaderKeys.end())
        return fail("unknown header key '" + std::string(key) + "'");
      return std::pair{std::string(key), std::string(trim(text.substr(colon + 1)))};
    }
  }
  return std::pair{std::string(), std::string(body)};
}

bool ends_with_ignoring_case(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  return std::equal(suffix.begin(), suffix.end(), s.end() - static_cast<long>(suffix.size()),
                    [](char a, char b) {
                      return std::tolower(static_cast<unsigned char>(a)) ==
                             std::tolower(static_cast<unsigned char>(b));
                    });
}

}  // namespace

std::string_view swf_field_name(SwfField field) {
  return kFieldNames[static_cast<int>(field)];
}

double swf_field_max(SwfField field) {
  constexpr double kExactInteger = 9007199254740992.0;  // 2^53
  constexpr double kInt = 2147483647.0;
  if (fractional(static_cast<int>(field))) return kMaxSimulatedSeconds;  // the time fields
  switch (field) {
    case SwfField::kJobNumber:
    case SwfField::kPrecedingJob:
    case SwfField::kUsedMemory:
    case SwfField::kRequestedMemory:
      return kExactInteger;
    case SwfField::kStatus:
      return 5;
    default:
      return kInt;
  }
}

std::string SwfTrace::header_value(std::string_view key) const {
  for (const auto& [k, v] : header)
    if (k == key) return v;
  return "";
}

Result<SwfTrace> parse_swf(std::string_view text, const std::string& source) {
  SwfTrace trace;
  std::unordered_map<double, int> line_of_job;  // job number -> the line that used it
  int line_number = 0;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    ++line_number;
    std::string where = source + ":" + std::to_string(line_number) + ": ";
    std::string_view body = trim(line);
    if (body.empty()) continue;
    if (body.front() == ';') {
      auto entry = parse_header(body.substr(1));
      if (!entry) return fail(where + entry.error().message);
      trace.header.push_back(std::move(*entry));
      continue;
    }
    SwfRecord record;
    int field = 0;
    while (!body.empty()) {
      size_t end = body.find_first_of(" \t");
      std::string_view token = body.substr(0, end);
      body = trim(body.substr(end == std::string_view::npos ? body.size() : end));
      if (field >= kSwfFieldCount)
        return fail(where + "more than " + std::to_string(kSwfFieldCount) +
                    " fields (extra value '" + std::string(token) + "')");
      std::string name =
          "field " + std::to_string(field + 1) + " (" + std::string(kFieldNames[field]) + ")";
      double value = 0;
      auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
      if (ec != std::errc() || ptr != token.data() + token.size() || !std::isfinite(value))
        return fail(where + name + ": '" + std::string(token) + "' is not a number");
      if (!fractional(field) && value != std::floor(value))
        return fail(where + name + ": '" + std::string(token) + "' is not a whole number");
      if (value < -1)
        return fail(where + name + ": " + std::string(token) +
                    " is negative (only -1, meaning missing, is allowed)");
      if (double max = swf_field_max(static_cast<SwfField>(field)); value > max)
        return fail(where + name + ": " + std::string(token) + " is out of range (at most " +
                    std::to_string(static_cast<long long>(max)) + ")");
      record.fields[field++] = value;
    }
    if (field < kSwfFieldCount)
      return fail(where + "found " + std::to_string(field) + " fields, expected " +
                  std::to_string(kSwfFieldCount) + " (missing field " + std::to_string(field + 1) +
                  " (" + std::string(kFieldNames[field]) + "))");
    double job_number = record[SwfField::kJobNumber];
    if (job_number < 0)
      return fail(where + "field 1 (Job Number): missing (-1); every job needs its own number");
    auto [it, fresh] = line_of_job.emplace(job_number, line_number);
    if (!fresh)
      return fail(where + "field 1 (Job Number): job " + exact_number(job_number) +
                  " already appears on line " + std::to_string(it->second));
    trace.records.push_back(record);
    trace.record_lines.push_back(line_number);
  }
  return trace;
}

Result<std::string> gunzip(std::string_view compressed, const std::string& source) {
  z_stream stream{};
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK)
    return fail(Error::Code::kInternal, source + ": zlib could not start");
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  std::string text;
  char buffer[1 << 16];
  int status = Z_OK;
  while (status != Z_STREAM_END || stream.avail_in > 0) {
    if (status == Z_STREAM_END) inflateReset(&stream);  // another gzip member follows
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof buffer;
    status = inflate(&stream, Z_NO_FLUSH);
    if (status != Z_OK && status != Z_STREAM_END) break;
    text.append(buffer, sizeof buffer - stream.avail_out);
    if (status == Z_OK && stream.avail_in == 0 && stream.avail_out > 0) {
      status = Z_DATA_ERROR;  // the data ends inside a member
      break;
    }
  }
  std::string message = stream.msg ? stream.msg : "truncated data";
  inflateEnd(&stream);
  if (status != Z_STREAM_END) return fail(source + ": not a readable gzip file (" + message + ")");
  return text;
}

Result<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(Error::Code::kNotFound, path + ": cannot open the file");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return fail(Error::Code::kUnavailable, path + ": read failed");
  if (!ends_with_ignoring_case(path, ".gz")) return bytes.str();
  return gunzip(bytes.str(), path);
}

Result<SwfTrace> read_swf_file(const std::string& path) {
  auto text = read_text_file(path);
  if (!text) return text.error();
  return parse_swf(*text, path);
}

void write_swf(std::ostream& out, const SwfTrace& trace) {
  for (const auto& [key, value] : trace.header) {
    if (key.empty())
      out << ";" << value << "\n";
    else
      out << "; " << key << ": " << value << "\n";
  }
  for (const SwfRecord& r : trace.records) {
    for (int f = 0; f < kSwfFieldCount; ++f) {
      if (f > 0) out << ' ';
      out << exact_number(r.fields[f]);  // the shortest text that reads back the same
    }
    out << "\n";
  }
}

SwfJobs swf_to_jobs(const SwfTrace& trace, int procs_per_node) {
  SwfJobs out;
  out.jobs.reserve(trace.records.size());
  for (size_t i = 0; i < trace.records.size(); ++i) {
    const SwfRecord& r = trace.records[i];
    double procs = r[SwfField::kRequestedProcessors];
    if (procs <= 0) procs = r[SwfField::kAllocatedProcessors];
    double run = r[SwfField::kRunTime];
    if (procs <= 0 || run < 0 || r[SwfField::kSubmitTime] < 0) {
      ++out.skipped;
      if (out.skipped_lines.size() < 5 && i < trace.record_lines.size())
        out.skipped_lines.push_back(trace.record_lines[i]);
      continue;
    }
    Job job;
    job.id = static_cast<JobId>(r[SwfField::kJobNumber]);
    job.submit = r[SwfField::kSubmitTime];
    job.run_time = run;
    double limit = r[SwfField::kRequestedTime];
    job.time_limit = limit > 0 ? limit : run;
    out.estimated_from_run_time += !(limit > 0);
    int nodes = static_cast<int>((static_cast<long>(procs) + procs_per_node - 1) / procs_per_node);
    job.request = Request::count(nodes);
    job.user = static_cast<int>(r[SwfField::kUserId]);
    job.group = static_cast<int>(r[SwfField::kGroupId]);
    out.jobs.push_back(std::move(job));
  }
  return out;
}

SwfTrace jobs_to_swf(const std::vector<Job>& jobs, SwfHeader header) {
  SwfTrace trace;
  trace.header = std::move(header);
  for (const Job& job : jobs) {
    SwfRecord r;
    r.fields.fill(-1);
    r[SwfField::kJobNumber] = static_cast<double>(job.id);
    r[SwfField::kSubmitTime] = job.submit;
    r[SwfField::kRunTime] = job.run_time;
    r[SwfField::kAllocatedProcessors] = job.request.nodes;
    r[SwfField::kRequestedProcessors] = job.request.nodes;
    r[SwfField::kRequestedTime] = job.time_limit;
    r[SwfField::kStatus] = 1;
    r[SwfField::kUserId] = job.user;
    r[SwfField::kGroupId] = job.group;
    trace.records.push_back(r);
  }
  return trace;
}

}  // namespace trellis
