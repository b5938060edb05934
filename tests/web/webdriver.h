// WebDriver: headless Chromium driven through Debian's chromedriver (the W3C WebDriver protocol,
// JSON over HTTP on loopback), for end-to-end tests of the dashboard: open a page, run a script
// in it, click an element, take a screenshot. chromedriver is started on a free port and stopped
// by its pid; the browser session is closed first, which stops the Chromium it started.
#pragma once

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "../daemon/daemon_test_support.h"

namespace trellis::testing {

inline bool have_chromedriver() {
  return std::filesystem::exists("/usr/bin/chromedriver") &&
         std::filesystem::exists("/usr/bin/chromium");
}

// A port no one listens on now (the kernel's pick for a socket bound to port 0).
inline int free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

inline std::string decode_base64(const std::string& text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  int bits = 0, buffer = 0;
  for (char c : text) {
    int v = value(c);
    if (v < 0) continue;  // '=' padding, line breaks
    buffer = (buffer << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xff));
    }
  }
  return out;
}

class WebDriver {
 public:
  // Starts chromedriver and a headless Chromium session (a window of `width` x `height`);
  // `scratch` holds the browser profile and chromedriver's log. ok() is false (with error())
  // when either cannot start.
  WebDriver(const std::string& scratch, int width = 1280, int height = 900) {
    port_ = free_loopback_port();
    std::filesystem::create_directories(scratch + "/profile");
    driver_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{"/usr/bin/chromedriver", "--port=" + std::to_string(port_)},
        scratch + "/chromedriver.log");
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
    client_->set_read_timeout(120, 0);
    bool ready = eventually([&] {
      auto r = client_->Get("/status");
      return r && r->status == 200;
    });
    if (!ready) {
      error_ = "chromedriver did not answer on port " + std::to_string(port_);
      return;
    }
    nlohmann::json options = {
        {"binary", "/usr/bin/chromium"},
        {"args",
         {"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
          "--no-first-run", "--disable-background-networking", "--disable-component-update",
          "--window-size=" + std::to_string(width) + "," + std::to_string(height),
          "--user-data-dir=" + scratch + "/profile"}}};
    nlohmann::json created =
        call("POST", "/session",
             {{"capabilities",
               {{"alwaysMatch", {{"browserName", "chrome"}, {"goog:chromeOptions", options}}}}}});
    if (created.is_object() && created.contains("sessionId")) {
      session_ = created["sessionId"].get<std::string>();
    } else {
      error_ = "no browser session: " + created.dump();
    }
  }
  ~WebDriver() {
    if (!session_.empty()) call("DELETE", "/session/" + session_, nullptr);
    if (driver_) driver_->stop();
  }
  WebDriver(const WebDriver&) = delete;
  WebDriver& operator=(const WebDriver&) = delete;

  bool ok() const { return !session_.empty(); }
  const std::string& error() const { return error_; }

  void go(const std::string& url) { call("POST", path("/url"), {{"url", url}}); }
  // Runs `body` (a function body: use `return`) in the page and returns its value; a script
  // error comes back as {"error": ...}.
  nlohmann::json run(const std::string& body) {
    return call("POST", path("/execute/sync"),
                {{"script", body}, {"args", nlohmann::json::array()}});
  }
  // Clicks the first element matching the CSS selector, as a user would (false when none). A
  // page that redraws may replace the element between finding and clicking it (a stale element):
  // it is found again, a few times.
  bool click(const std::string& css) {
    for (int attempt = 0; attempt < 5; ++attempt) {
      nlohmann::json found =
          call("POST", path("/element"), {{"using", "css selector"}, {"value", css}});
      if (found.is_object() && !found.empty() && !found.contains("error")) {
        std::string element = found.begin().value().get<std::string>();
        nlohmann::json clicked =
            call("POST", path("/element/" + element + "/click"), nlohmann::json::object());
        if (!(clicked.is_object() && clicked.contains("error"))) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }
  // Polls `body` (a script returning true or false) until true or `seconds` pass.
  bool wait_for(const std::string& body, int seconds = 30) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      if (run(body) == true) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }
  // The visible page as PNG bytes.
  std::string screenshot() {
    nlohmann::json png = call("GET", path("/screenshot"), nullptr);
    return png.is_string() ? decode_base64(png.get<std::string>()) : std::string();
  }

 private:
  std::string path(const std::string& rest) const { return "/session/" + session_ + rest; }
  // One WebDriver command; its "value", or {"error": ...} when it failed.
  nlohmann::json call(const std::string& method, const std::string& target,
                      const nlohmann::json& body) {
    httplib::Result r = method == "GET" ? client_->Get(target)
                        : method == "DELETE"
                            ? client_->Delete(target)
                            : client_->Post(target, body.dump(), "application/json");
    if (!r) return {{"error", "no answer from chromedriver (" + target + ")"}};
    nlohmann::json reply = nlohmann::json::parse(r->body, nullptr, false);
    if (!reply.is_object() || !reply.contains("value")) return {{"error", r->body}};
    if (r->status != 200) return {{"error", reply["value"].dump()}};
    return reply["value"];
  }

  int port_ = -1;
  std::unique_ptr<ChildProcess> driver_;
  std::unique_ptr<httplib::Client> client_;
  std::string session_;
  std::string error_;
};

}  // namespace trellis::testing
