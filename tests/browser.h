// Helpers for end-to-end tests of the HTML reports (running the CLI, reading files and scratch
// directories are in cli_run.h): open a page in headless Chromium to read what its scripts
// recorded in the DOM (the reports' data-charts-rendered / data-charts-expected / data-errors).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli_run.h"

namespace trellis::browser_test {

namespace fs = std::filesystem;

using test::read_text;

inline bool have_chromium() {
  return fs::exists("/usr/bin/chromium");
}

// The value of attribute `name` in an HTML start tag ("" when absent).
inline std::string attribute(const std::string& tag, const std::string& name) {
  size_t at = tag.find(" " + name + "=\"");
  if (at == std::string::npos) return "";
  size_t start = at + name.size() + 3;
  return tag.substr(start, tag.find('"', start) - start);
}

// The integer value of attribute `name` in a start tag; -1 when absent or not a number.
inline int int_attribute(const std::string& tag, const std::string& name) {
  std::string text = attribute(tag, name);
  return text.empty() || text.find_first_not_of("0123456789") != std::string::npos
             ? -1
             : std::stoi(text);
}

// The start tag of the element with id `id` in `dom` ("" when absent).
inline std::string element_tag(const std::string& dom, const std::string& id) {
  size_t at = dom.find(" id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  size_t open = dom.rfind('<', at);
  return dom.substr(open, dom.find('>', at) - open);
}

// The page's DOM after its scripts ran in headless Chromium (in a 1280-pixel-wide window), or ""
// with a test failure when Chromium fails. `scratch` holds the browser profile and its log.
inline std::string open_in_chromium(const fs::path& html, const fs::path& scratch) {
  fs::path profile = scratch / "chromium-profile";
  fs::create_directories(profile);
  fs::path dom = scratch / "dom.html", log = scratch / "chromium.log";
  std::string cmd =
      "timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu "
      "--disable-quic --no-first-run --disable-background-networking "
      "--disable-component-update --disable-sync --user-data-dir=" +
      profile.string() +
      " --window-size=1280,2000 --enable-logging=stderr --v=0 --virtual-time-budget=15000 "
      "--dump-dom file://" +
      html.string() + " > " + dom.string() + " 2> " + log.string();
  if (std::system(cmd.c_str()) != 0) {
    ADD_FAILURE() << "chromium failed: " << read_text(log);
    return "";
  }
  std::string console = read_text(log);
  EXPECT_EQ(console.find("Uncaught"), std::string::npos) << console;
  return read_text(dom);
}

// The report's <body> start tag: it records what its scripts did (charts expected, charts drawn,
// errors). Embedded frames have bodies of their own; this is the one that carries the record.
inline std::string report_body(const std::string& dom) {
  for (size_t at = dom.find("<body"); at != std::string::npos; at = dom.find("<body", at + 1)) {
    std::string candidate = dom.substr(at, dom.find('>', at) - at);
    if (candidate.find("data-charts-rendered") != std::string::npos) return candidate;
  }
  return "";
}

// Checks that the page drew every chart it meant to (at least `min_charts`), with no script
// error; returns its DOM.
inline std::string expect_renders(const fs::path& html, const fs::path& scratch, int min_charts) {
  std::string page = open_in_chromium(html, scratch);
  std::string tag = report_body(page);
  EXPECT_FALSE(tag.empty()) << "no report body in the DOM";
  if (tag.empty()) return page;
  int rendered = int_attribute(tag, "data-charts-rendered");
  int expected = int_attribute(tag, "data-charts-expected");
  EXPECT_EQ(attribute(tag, "data-errors"), "") << "script errors";
  EXPECT_EQ(rendered, expected);
  EXPECT_GE(rendered, min_charts);
  size_t canvases = 0;
  for (size_t at = page.find("<canvas"); at != std::string::npos; at = page.find("<canvas", at + 1))
    ++canvases;
  EXPECT_GE(canvases, static_cast<size_t>(rendered)) << "charts without a drawing surface";
  return page;
}

}  // namespace trellis::browser_test
