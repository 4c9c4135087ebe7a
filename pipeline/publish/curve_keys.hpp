// CURVE keys in ZeroMQ's certificate files: the ZPL text format that czmq's zcert and libzmq's
// curve_keygen write, e.g.
//     curve
//         public-key = "<40 Z85 characters>"
//         secret-key = "<40 Z85 characters>"
// A public certificate (NAME.key) holds only public-key; a secret one (NAME.key_secret) both.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace stereod::publish {

// Keys as 32-byte binary strings; secret_key is empty for a public certificate.
struct CurveCertificate {
  std::string public_key;
  std::string secret_key;
};

// True when this libzmq was built with CURVE (zmq_has("curve")).
bool curve_available();
// Throws std::runtime_error naming `who` (the option or flag that asked for CURVE) when not.
void require_curve(std::string_view who);

// Throws std::runtime_error "PATH:LINE: ..." when the file cannot be read, has no public key, a
// key is not 40 Z85 characters, or the public key does not belong to the secret key.
CurveCertificate read_certificate(const std::string& path);
// The server's secret certificate as the publisher needs it: a regular file, private to its
// owner (others may not read it, nobody but the owner may write it: 0600, 0400, 0640 or 0440),
// holding a secret key and the public key that belongs to it. Throws std::runtime_error
// "PATH: ..." saying what is wrong (a public certificate, the permissions and how to fix them).
CurveCertificate read_server_certificate(const std::string& path);
// The public keys of every "*.key" certificate in `dir` (czmq's convention for a folder of
// allowed clients). Throws std::runtime_error when the folder cannot be read or holds none.
std::vector<std::string> read_public_keys(const std::string& dir);

struct CertificatePaths {
  std::string public_file;  // DIR/NAME.key
  std::string secret_file;  // DIR/NAME.key_secret, mode 0600
};
// Generates a fresh key pair and writes both certificates. Never overwrites: throws
// std::runtime_error when either file exists or cannot be written.
CertificatePaths write_new_certificate(const std::string& dir, const std::string& name);

std::string z85_encode_key(std::string_view key);   // 32 bytes -> 40 characters
std::string z85_decode_key(std::string_view text);  // throws std::invalid_argument

}  // namespace stereod::publish
