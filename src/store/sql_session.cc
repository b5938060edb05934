#include "store/sql_session.h"

#include <charconv>

#include <nlohmann/json.hpp>

namespace trellis::sql {
namespace {

int64_t parse_int64(const std::string& text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc() && end == text.data() + text.size()) return v;
  // "3.0": a REAL read as an integer.
  double d = 0;
  auto [dend, dec] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (dec == std::errc()) return static_cast<int64_t>(d);
  return 0;
}

double parse_double(const std::string& text) {
  double d = 0;
  std::from_chars(text.data(), text.data() + text.size(), d);
  return d;
}

}  // namespace

std::string Param::to_text() const {
  if (const auto* i = std::get_if<int64_t>(&value_)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value_)) {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, *d);
    return std::string(buf, ec == std::errc() ? end : buf);
  }
  return std::get<std::string>(value_);
}

bool Rows::is_null(size_t row, int col) const {
  return std::holds_alternative<std::monostate>(rows_.at(row).at(col));
}

int64_t Rows::int64(size_t row, int col) const {
  const Cell& cell = rows_.at(row).at(col);
  if (const auto* i = std::get_if<int64_t>(&cell)) return *i;
  if (const auto* d = std::get_if<double>(&cell)) return static_cast<int64_t>(*d);
  if (const auto* s = std::get_if<std::string>(&cell)) return parse_int64(*s);
  return 0;
}

double Rows::real(size_t row, int col) const {
  const Cell& cell = rows_.at(row).at(col);
  if (const auto* d = std::get_if<double>(&cell)) return *d;
  if (const auto* i = std::get_if<int64_t>(&cell)) return static_cast<double>(*i);
  if (const auto* s = std::get_if<std::string>(&cell)) return parse_double(*s);
  return 0;
}

std::string Rows::text(size_t row, int col) const {
  const Cell& cell = rows_.at(row).at(col);
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  if (const auto* i = std::get_if<int64_t>(&cell)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&cell)) return Param(*d).to_text();
  return {};
}

Error Session::fail(Error::Code code, std::string_view what) const {
  std::string message = name_ + ": ";
  if (!operation_.empty()) message += std::string(operation_) + ": ";
  return Error{message + std::string(what), code};
}

Status finish_write(Session& db, bool counted) {
  if (db.events.empty() && !counted) return Ok{};
  if (Status s = db.lock_log(); !s) return s;
  if (!db.events.empty()) {
    nlohmann::json rows = nlohmann::json::array();
    for (const PendingEvent& e : db.events)
      rows.push_back({e.time, e.kind, e.job, e.node, e.detail});
    if (Status s = db.defer(db.dialect().insert_events,
                            {rows.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
        !s)
      return s;
  }
  if (!counted) return Ok{};
  if (Status s =
          db.defer("UPDATE meta SET value = CAST(value AS BIGINT) + 1 WHERE key = 'version'");
      !s) {
    return s;
  }
  return db.announce_change();
}

std::string json_column(const Dialect& dialect, int index, std::string_view type) {
  std::string item(dialect.json_item);
  item.replace(item.find("{i}"), 3, std::to_string(index));
  if (type == "text") return item;
  return "CAST(" + item + " AS " +
         std::string(type == "real" ? dialect.real_type : dialect.int64_type) + ")";
}

}  // namespace trellis::sql
