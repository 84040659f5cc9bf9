// cuflash-roofline: benchmarks attention kernels against the roofline model.
#include <cstdio>
#include <exception>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "build_info.hpp"
#include "commands.hpp"
#include "git_info.hpp"
#include "tool_info.hpp"

namespace {

int fail(int code, const std::string& message) {
  // One line, whatever the message: CLI11 lists extras over several lines. A
  // control character that a file or an argument brought (ESC) is shown as
  // \xNN rather than sent to the terminal.
  std::string line;
  for (const char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      line += ' ';
    } else if (byte < 0x20 || byte == 0x7f) {
      line += fmt::format("\\x{:02x}", byte);
    } else {
      line += c;
    }
  }
  std::fprintf(stderr, "cuflash-roofline: error: %s\n", line.c_str());
  return code;
}

// CLI11 answers "A subcommand is required" both when none is given and when
// it is misspelt; name the word and the commands instead. The command is the
// first word that is neither an option of the tool nor an option's value.
std::string command_problem(CLI::App& app, int argc, char** argv) {
  std::string names;
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (command->get_group().empty()) continue;  // hidden: profile-child, figure-table
    names += (names.empty() ? "" : ", ") + command->get_name();
  }
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.starts_with('-')) {
      const CLI::Option* option = app.get_option_no_throw(word);
      if (option != nullptr && option->get_expected_min() > 0) ++i;  // its value
      continue;
    }
    return fmt::format("unknown command '{}' (commands: {})", word, names);
  }
  return fmt::format("a command is required (commands: {}; --help explains each)", names);
}

// A repeatable option takes one value per use. CLI11 lets a list option take
// every word up to the next option, so `audit --plugin p.so a.json b.json`
// loaded a.json as a plugin and `compare --match-kernel a=b BASE NEW` took
// BASE as a second rename.
void one_value_per_use(CLI::App& app) {
  for (CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    for (CLI::Option* option : command->get_options()) {
      if (!option->get_positional() && option->get_allow_extra_args()) {
        option->allow_extra_args(false);
      }
    }
  }
}

// `--list` prints the kernels and exits: an option it would ignore (an
// axis, an output) is refused by name rather than dropped, so `model --list
// --json x.json` does not exit 0 having written nothing.
void list_stands_alone(CLI::App& app) {
  for (CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    CLI::Option* list = command->get_option_no_throw("--list");
    if (list == nullptr) continue;
    for (CLI::Option* option : command->get_options()) {
      const std::string name = option->get_name();
      if (option == list || name == "--plugin" || name == "--help" || name == "--version") {
        continue;
      }
      list->excludes(option);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  cfr::app::set_command_line(argc, argv);
  CLI::App app{"cuflash-roofline: attention kernels against the roofline, with evidence"};
  app.set_version_flag("--version", std::string(CFR_VERSION) + " (" + CFR_GIT_DESCRIBE + ")");
  app.require_subcommand(1);
  cfr::app::CommandStatus status;
  cfr::app::add_gpus_command(app);
  cfr::app::add_model_command(app, status);
  cfr::app::add_sweep_command(app, status);
  cfr::app::add_ceilings_command(app);
  cfr::app::add_table_command(app);
  cfr::app::add_profile_child_command(app, status);
  cfr::app::add_figure_table_command(app);
  cfr::app::add_audit_command(app, status);
  cfr::app::add_compare_command(app, status);
  cfr::app::add_plot_command(app, status);
  cfr::app::add_report_command(app, status);
  cfr::app::add_import_historical_command(app, status);
  cfr::app::add_import_samples_command(app, status);
  one_value_per_use(app);
  list_stands_alone(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& done) {  // --help, --version
    return app.exit(done);
  } catch (const CLI::RequiredError& error) {
    if (app.get_subcommands().empty()) {
      return fail(cfr::app::exit_code::usage, command_problem(app, argc, argv));
    }
    return fail(cfr::app::exit_code::usage, error.what());
  } catch (const CLI::ParseError& error) {
    // One line and exit 2 like every other usage error, not CLI11's codes
    // (105..115) and its "Run with --help" line.
    return fail(cfr::app::exit_code::usage, error.what());
  } catch (const cfr::NoDeviceError& error) {
    return fail(cfr::app::exit_code::no_device, error.what());
  } catch (const std::exception& error) {
    return fail(cfr::app::exit_code::usage, error.what());
  }
  return status.exit_status;
}
