// stereod-keygen: a CURVE key pair in ZeroMQ's certificate format, for the daemon (its secret
// certificate goes in publish.curve.server_key) or for a client that the daemon lists by name.
#include <CLI/CLI.hpp>

#include <iostream>

#include "publish/curve_keys.hpp"

int main(int argc, char** argv) {
  CLI::App app{"stereod-keygen: write a CURVE key pair (NAME.key and NAME.key_secret)"};
  std::string dir, name = "server";
  app.add_option("dir", dir, "Folder to write into")->required()->check(CLI::ExistingDirectory);
  app.add_option("--name", name, "File name without extension")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    const auto paths = stereod::publish::write_new_certificate(dir, name);
    std::cout << "public certificate: " << paths.public_file << " (give to the other side)\n"
              << "secret certificate: " << paths.secret_file << " (mode 0600, keep private)\n";
  } catch (const std::exception& e) {
    std::cerr << "stereod-keygen: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
