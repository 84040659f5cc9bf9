#pragma once

// Debian's Chromium, headless, for the browser test of the HTML page. No
// Chromium on the machine: the test binary reports its cases as skipped
// (browser_main.cpp), never as passed.

#include <string>
#include <vector>

// CFR_CHROMIUM when set, else `chromium` or `chromium-browser` on PATH; empty
// when there is none.
std::string chromium_path();

struct BrowserRun {
  int exit_code = -1;
  std::string out;  // --dump-dom's DOM
  std::string err;  // --enable-logging=stderr: the console's messages, as "...:CONSOLE..." lines
};

// Opens `url` headless (no GPU, no sandbox: CI runs as root) with a profile
// of its own, the console logged to stderr, plus `arguments`, within 60 s.
BrowserRun run_chromium(const std::string& url, const std::vector<std::string>& arguments);
