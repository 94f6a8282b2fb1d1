// The recur command-line program: the table of commands, the help, and the
// one place errors are printed ("recur CMD: SUBJECT: MESSAGE" on stderr).
// Each command lives in its own file and uses only the public API; see
// commands.hpp.
#include <cstdio>
#include <exception>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <recur/config.hpp>

#include "commands.hpp"

namespace recur_cli {
namespace {

command const* const commands[] = {&demo_command, &linrec_command,  &filter_command,  &sosfilt_command,
                                   &dpcm_command, &tridiag_command, &poisson_command, &heat_command};

command const* find_command(std::string_view name) {
  for (command const* c : commands)
    if (c->name == name) return c;
  return nullptr;
}

// The options every command takes, after each command's own.
constexpr char const* common_options =
    "  --device D          cpu, gpu or auto (default): auto runs on the GPU when there is a CUDA\n"
    "                      device, else on the CPU; gpu without a device is an error\n"
    "  -h, --help          print this help\n";

constexpr char const* common_exit_status =
    "  0  done, the output written\n"
    "  1  an input or the run failed; nothing written\n"
    "  2  bad command line\n";

void print_overview() {
  fmt::print("recur {}: recurrence and scan primitives on the CPU and CUDA GPUs\n\n", RECUR_VERSION_STRING);
  fmt::print("usage: recur <command> [options] [arguments]\n\ncommands:\n");
  for (command const* c : commands) fmt::print("  {:<10} {}\n", c->name, c->summary);
  fmt::print("  {:<10} {}\n", "help", "print a command's help: recur help <command>");
  fmt::print(
      "\noptions:\n"
      "  -h, --help          print this help\n"
      "  --version           print the version\n"
      "\nEvery command takes --device cpu|gpu|auto (default auto: the GPU when there is one) and\n"
      "--help; `recur <command> --help` shows its options and an example. An option's value is the\n"
      "word after it, even one that starts with '-' (--b -0.5,1), or follows '=' (--b=-0.5,1).\n");
}

void print_help(command const& c) {
  fmt::print("usage: recur {}\n\n{}\n\noptions:\n{}{}\nexample:\n  {}\n\nexit status:\n{}", c.usage,
             c.description, c.options, common_options, c.example,
             c.exit_status.empty() ? std::string_view(common_exit_status) : c.exit_status);
}

// The command being run, for the error messages.
std::string_view current = {};

int run(std::span<char* const> args) {
  if (args.empty()) usage_error("", "no command given");
  std::string_view const first = args[0];
  if (first == "-h" || first == "--help" || first == "--version") {
    if (args.size() > 1) usage_error(args[1], "unexpected argument");
    if (first == "--version")
      fmt::print("recur {}\n", RECUR_VERSION_STRING);
    else
      print_overview();
    return exit_ok;
  }
  if (first == "help") {
    if (args.size() == 1) {
      print_overview();
      return exit_ok;
    }
    if (args.size() > 2) usage_error(args[2], "unexpected argument");
    command const* c = find_command(args[1]);
    if (!c) usage_error(args[1], "unknown command");
    print_help(*c);
    return exit_ok;
  }
  command const* c = find_command(first);
  if (!c) usage_error(std::string(first), first.starts_with("-") ? "unknown option" : "unknown command");
  current = c->name;
  std::vector<option_spec> options(c->accepts.begin(), c->accepts.end());
  options.push_back({"--device"});
  arguments const parsed = parse_arguments(args.subspan(1), options);
  if (parsed.help) {
    print_help(*c);
    return exit_ok;
  }
  return c->run(parsed);
}

std::string prefix() { return current.empty() ? std::string("recur") : fmt::format("recur {}", current); }

}  // namespace
}  // namespace recur_cli

int main(int argc, char** argv) {
  using namespace recur_cli;
  try {
    return run(std::span<char* const>(argv + 1, static_cast<std::size_t>(argc > 0 ? argc - 1 : 0)));
  } catch (cli_error const& e) {
    if (e.subject.empty())
      fmt::print(stderr, "{}: {}\n", prefix(), e.what());
    else
      fmt::print(stderr, "{}: {}: {}\n", prefix(), e.subject, e.what());
    if (e.status == exit_usage) fmt::print(stderr, "Try '{} --help'.\n", prefix());
    return e.status;
  } catch (std::bad_alloc const&) {
    fmt::print(stderr, "{}: out of memory\n", prefix());
  } catch (std::exception const& e) {
    fmt::print(stderr, "{}: error: {}\n", prefix(), e.what());
  }
  return exit_failed;
}
