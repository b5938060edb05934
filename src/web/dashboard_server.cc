#include "web/dashboard_server.h"

#include <httplib.h>

#include <algorithm>
#include <charconv>
#include <chrono>

#include "sim/echarts_bundle.h"
#include "topology/machine.h"
#include "web/dashboard_api.h"
#include "web/dashboard_page.h"

namespace trellis::web {
namespace {

Seconds now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void send_json(httplib::Response& response, const nlohmann::json& body) {
  response.set_content(body.dump(), "application/json");
}

// A store error as JSON with an HTTP status from its code (404 for an unknown job).
void send_error(httplib::Response& response, const Error& error) {
  response.status = error.code == Error::Code::kNotFound          ? 404
                    : error.code == Error::Code::kInvalidArgument ? 400
                                                                  : 503;
  send_json(response, {{"error", error.message}});
}

}  // namespace

Result<std::pair<std::string, int>> parse_listen_address(const std::string& text) {
  std::string host = "127.0.0.1";
  std::string port_text = text;
  if (size_t colon = text.rfind(':'); colon != std::string::npos) {
    if (colon > 0) host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  int port = -1;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
      port < 0 || port > 65535) {
    return fail("--listen: expected HOST:PORT with a port from 0 to 65535, got '" + text + "'");
  }
  return std::make_pair(host, port);
}

Result<std::unique_ptr<DashboardServer>> DashboardServer::start(const DashboardOptions& options) {
  std::unique_ptr<DashboardServer> server(new DashboardServer());
  Result<std::unique_ptr<StateStore>> store = open_store(options.store_url, {.read_only = true});
  if (!store) return store.error();
  server->store_ = std::move(*store);
  Result<std::string> spec = server->store_->machine_spec();
  if (!spec) return spec.error();
  Result<Machine> machine = Machine::parse(*spec);
  if (!machine) return machine.error();
  server->node_count_ = machine->node_count();

  server->http_ = std::make_unique<httplib::Server>();
  server->add_routes();
  server->host_ = options.host;
  server->inventories_ = options.inventories;
  if (options.port == 0) {
    server->port_ = server->http_->bind_to_any_port(options.host);
  } else {
    server->port_ = server->http_->bind_to_port(options.host, options.port) ? options.port : -1;
  }
  if (server->port_ <= 0) {
    return fail(Error::Code::kUnavailable, "cannot listen on " + options.host + ":" +
                                               std::to_string(options.port) +
                                               " (in use, or not an address of this host)");
  }
  httplib::Server* http = server->http_.get();
  server->listener_ = std::thread([http] { http->listen_after_bind(); });
  return server;
}

DashboardServer::~DashboardServer() {
  stop();
  if (listener_.joinable()) listener_.join();
}

void DashboardServer::wait() {
  if (listener_.joinable()) listener_.join();
}

void DashboardServer::stop() {
  if (http_) http_->stop();
}

void DashboardServer::add_routes() {
  httplib::Server& http = *http_;
  http.set_default_headers({{"X-Content-Type-Options", "nosniff"},
                            {"Cache-Control", "no-store"},
                            {"Content-Security-Policy",
                             "default-src 'self'; script-src 'self' 'unsafe-inline'; "
                             "style-src 'self' 'unsafe-inline'; img-src 'self' data:"}});
  http.Get("/", [](const httplib::Request&, httplib::Response& response) {
    response.set_content(std::string(dashboard_html()), "text/html; charset=utf-8");
  });
  http.Get("/echarts.min.js", [](const httplib::Request&, httplib::Response& response) {
    response.set_content(std::string(echarts_js()), "text/javascript; charset=utf-8");
  });
  http.Get("/api/nodes", [this](const httplib::Request&, httplib::Response& response) {
    Result<nlohmann::json> body = nodes_json(*store_, now_seconds(), inventories_);
    if (!body) return send_error(response, body.error());
    send_json(response, *body);
  });
  http.Get("/api/jobs", [this](const httplib::Request& request, httplib::Response& response) {
    Result<JobFilter> filter =
        parse_job_filter(request.get_param_value("state"), request.get_param_value("user"),
                         request.get_param_value("limit"));
    if (!filter) return send_error(response, filter.error());
    Result<nlohmann::json> body = jobs_json(*store_, *filter, now_seconds());
    if (!body) return send_error(response, body.error());
    send_json(response, *body);
  });
  http.Get(R"(/api/jobs/(\d{1,18}))",
           [this](const httplib::Request& request, httplib::Response& response) {
             JobId id = std::stoll(request.matches[1].str());
             std::lock_guard lock(history_mutex_);
             if (Status caught = history_.catch_up(*store_); !caught) {
               return send_error(response, caught.error());
             }
             Result<nlohmann::json> body = job_json(*store_, history_, id, now_seconds());
             if (!body) return send_error(response, body.error());
             send_json(response, *body);
           });
  http.Get("/api/utilization",
           [this](const httplib::Request& request, httplib::Response& response) {
             double window = 3600;
             std::string since = request.get_param_value("since");
             if (!since.empty() && since != "all") {
               auto [end, ec] = std::from_chars(since.data(), since.data() + since.size(), window);
               if (ec != std::errc() || end != since.data() + since.size() || !(window > 0) ||
                   window > 366 * 86400.0) {
                 return send_error(response, fail("since: expected seconds back from now (up to a "
                                                  "year) or 'all', got '" +
                                                  since + "'"));
               }
             }
             std::lock_guard lock(history_mutex_);
             if (Status caught = history_.catch_up(*store_); !caught) {
               return send_error(response, caught.error());
             }
             Seconds now = now_seconds();
             if (since == "all" && history_.first_time() > 0) {
               window = std::max(now - history_.first_time(), 1.0);
             }
             send_json(response, utilization_json(history_, node_count_, now - window, now));
           });
  http.set_error_handler([](const httplib::Request&, httplib::Response& response) {
    if (response.body.empty()) {
      send_json(response, {{"error", "HTTP " + std::to_string(response.status)}});
    }
  });
}

}  // namespace trellis::web
