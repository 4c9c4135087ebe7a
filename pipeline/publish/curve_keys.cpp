#include "publish/curve_keys.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <zmq.h>

namespace stereod::publish {
namespace {

constexpr std::size_t kKeyBytes = 32;
constexpr std::size_t kZ85Chars = 40;

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

std::string unquote(std::string v) {
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    return v.substr(1, v.size() - 2);
  }
  return v;
}

void write_file(const std::string& path, const std::string& text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    const int err = errno;
    throw std::runtime_error(
        path + ": cannot create (" + std::strerror(err) + ")" +
        (err == EEXIST ? "; keys are never overwritten, remove it first" : ""));
  }
  const ssize_t n = ::write(fd, text.data(), text.size());
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size())) {
    throw std::runtime_error(path + ": write failed (" + std::strerror(err) + ")");
  }
}

std::string certificate_text(const std::string& public_z85, const std::string* secret_z85) {
  std::string t;
  t += secret_z85 ? "#   ZeroMQ CURVE **Secret** Certificate, written by stereod-keygen.\n"
                    "#   Keep it private: whoever has it can pose as its owner.\n"
                  : "#   ZeroMQ CURVE Public Certificate, written by stereod-keygen.\n"
                    "#   Give it to the peers that must recognise its owner.\n";
  t += "\nmetadata\ncurve\n    public-key = \"" + public_z85 + "\"\n";
  if (secret_z85) t += "    secret-key = \"" + *secret_z85 + "\"\n";
  return t;
}

}  // namespace

bool curve_available() {
  return zmq_has("curve") != 0;
}

void require_curve(std::string_view who) {
  if (curve_available()) return;
  int major = 0, minor = 0, patch = 0;
  zmq_version(&major, &minor, &patch);
  throw std::runtime_error(std::string(who) +
                           ": CURVE needs a libzmq built with it, and this one (" +
                           std::to_string(major) + "." + std::to_string(minor) + "." +
                           std::to_string(patch) + ") was not (zmq_has(\"curve\") is false)");
}

std::string z85_encode_key(std::string_view key) {
  if (key.size() != kKeyBytes) {
    throw std::invalid_argument("a CURVE key has 32 bytes, got " + std::to_string(key.size()));
  }
  char text[kZ85Chars + 1] = {};
  zmq_z85_encode(text, reinterpret_cast<const std::uint8_t*>(key.data()), key.size());
  return std::string(text, kZ85Chars);
}

std::string z85_decode_key(std::string_view text) {
  if (text.size() != kZ85Chars) {
    throw std::invalid_argument("expected 40 Z85 characters, got " + std::to_string(text.size()));
  }
  const std::string z(text);  // zmq_z85_decode wants a terminated string
  std::string key(kKeyBytes, '\0');
  if (zmq_z85_decode(reinterpret_cast<std::uint8_t*>(key.data()), z.c_str()) == nullptr) {
    throw std::invalid_argument("not valid Z85 text");
  }
  return key;
}

CurveCertificate read_certificate(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open (" + std::strerror(errno) + ")");
  CurveCertificate cert;
  std::string line, section;
  int number = 0;
  int public_line = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const bool indented = line[0] == ' ' || line[0] == '\t';
    if (!indented) {
      section = trim(t.substr(0, t.find('=')));
      continue;
    }
    const auto eq = t.find('=');
    if (section != "curve" || eq == std::string::npos) continue;
    const std::string name = trim(t.substr(0, eq));
    if (name != "public-key" && name != "secret-key") continue;
    std::string key;
    try {
      key = z85_decode_key(unquote(trim(t.substr(eq + 1))));
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(path + ":" + std::to_string(number) + ": " + name + ": " + e.what());
    }
    if (name == "public-key") {
      cert.public_key = key;
      public_line = number;
    } else {
      cert.secret_key = key;
    }
  }
  if (in.bad()) throw std::runtime_error(path + ": read failed");
  if (cert.public_key.empty()) {
    throw std::runtime_error(path +
                             ": no public-key in a \"curve\" section; not a ZeroMQ certificate");
  }
  if (!cert.secret_key.empty() && curve_available()) {
    char public_z85[kZ85Chars + 1] = {};
    const std::string secret_z85 = z85_encode_key(cert.secret_key);
    if (zmq_curve_public(public_z85, secret_z85.c_str()) == 0 &&
        z85_decode_key(std::string_view(public_z85, kZ85Chars)) != cert.public_key) {
      throw std::runtime_error(path + ":" + std::to_string(public_line) +
                               ": public-key does not belong to the secret-key");
    }
  }
  return cert;
}

CurveCertificate read_server_certificate(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw std::runtime_error(path + ": cannot open (" + std::strerror(errno) + ")");
  }
  if (!S_ISREG(st.st_mode)) throw std::runtime_error(path + ": not a regular file");
  CurveCertificate cert = read_certificate(path);
  if (cert.secret_key.empty()) {
    throw std::runtime_error(path +
                             ": a public certificate; the server needs its secret one "
                             "(NAME.key_secret, written beside NAME.key by stereod-keygen)");
  }
  const unsigned mode = st.st_mode & 07777;
  if ((mode & (S_IRWXO | S_IWGRP)) != 0) {
    char octal[8];
    std::snprintf(octal, sizeof octal, "%04o", mode);
    throw std::runtime_error(path + ": mode " + octal +
                             " lets other users read or change the server's secret key; make it "
                             "private: chmod 600 (or 640 for the daemon's group)");
  }
  return cert;
}

std::vector<std::string> read_public_keys(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".key") files.push_back(it->path());
  }
  if (ec) throw std::runtime_error(dir + ": cannot list the folder (" + ec.message() + ")");
  if (files.empty()) {
    throw std::runtime_error(dir + ": no client certificates (*.key) in the folder");
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> keys;
  for (const auto& f : files) keys.push_back(read_certificate(f.string()).public_key);
  return keys;
}

CertificatePaths write_new_certificate(const std::string& dir, const std::string& name) {
  require_curve("key generation");
  if (name.empty() || name.find('/') != std::string::npos) {
    throw std::runtime_error("certificate name \"" + name + "\": expected a plain file name");
  }
  char public_z85[kZ85Chars + 1] = {};
  char secret_z85[kZ85Chars + 1] = {};
  if (zmq_curve_keypair(public_z85, secret_z85) != 0) {
    throw std::runtime_error(std::string("zmq_curve_keypair failed: ") + zmq_strerror(zmq_errno()));
  }
  const std::string pub(public_z85, kZ85Chars), sec(secret_z85, kZ85Chars);
  CertificatePaths paths{(std::filesystem::path(dir) / (name + ".key")).string(),
                         (std::filesystem::path(dir) / (name + ".key_secret")).string()};
  // The secret first: if it cannot be written, no orphan public file is left behind.
  write_file(paths.secret_file, certificate_text(pub, &sec), 0600);
  write_file(paths.public_file, certificate_text(pub, nullptr), 0644);
  return paths;
}

}  // namespace stereod::publish
