#include "cli_runner.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool file_exists(const std::string& path) {
  return std::ifstream(path).good();
}

std::string temp_path(const std::string& name) {
  return "/tmp/cfr-cli-test-" + std::to_string(::getpid()) + "-" + name;
}

CliResult run_cli(const std::string& arguments) {
  const std::string out_path = temp_path("stdout");
  const std::string err_path = temp_path("stderr");
  const std::string command = std::string("CUDA_VISIBLE_DEVICES= '") + CFR_BINARY + "' " +
                              arguments + " >'" + out_path + "' 2>'" + err_path + "'";
  const int status = std::system(command.c_str());
  CliResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return result;
}
