// Certificates for TLS tests, made at test time by the `openssl` command (deploy/common.sh
// installs it) into a temporary directory, so no key is ever committed: a test CA ("ca"), a
// second unrelated CA ("other-ca"), a server certificate for localhost and 127.0.0.1 ("server")
// and a client certificate ("client"), the leaves signed by "ca"; P-256 keys, PEM files
// NAME.pem and NAME.key.
//
//   ikd::testing::TestCertificates certificates;
//   ASSERT_TRUE(certificates.ok()) << certificates.log();
//   options.tls = {certificates.File("server.pem"), certificates.File("server.key"), ""};
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"

namespace ikd::testing {

class TestCertificates {
 public:
  TestCertificates() {
    std::string pattern = "/tmp/ikd-certificates-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) return;
    dir_ = pattern;
    Write("ca.cnf",
          "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = ikd test CA\n"
          "[v3_ca]\nbasicConstraints = critical,CA:TRUE\n"
          "keyUsage = critical,keyCertSign,cRLSign\nsubjectKeyIdentifier = hash\n");
    Write("leaf.cnf",
          "[server]\nbasicConstraints = CA:FALSE\nkeyUsage = critical,digitalSignature\n"
          "extendedKeyUsage = serverAuth\nsubjectAltName = DNS:localhost,IP:127.0.0.1\n"
          "[client]\nbasicConstraints = CA:FALSE\nkeyUsage = critical,digitalSignature\n"
          "extendedKeyUsage = clientAuth\n");
    ok_ = MakeCa("ca") && MakeCa("other-ca") && MakeLeaf("server", "localhost", 2) &&
          MakeLeaf("client", "ikd test client", 3);
  }
  ~TestCertificates() {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  TestCertificates(const TestCertificates&) = delete;
  TestCertificates& operator=(const TestCertificates&) = delete;

  // False when a command failed; log() then holds openssl's output.
  bool ok() const { return ok_; }
  std::string log() const {
    std::ifstream in(File("openssl.log"));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::string File(const std::string& name) const { return dir_ + "/" + name; }

 private:
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(File(name)) << text;
  }
  bool Run(const std::string& arguments) const {
    const std::string command =
        absl::StrCat("cd ", dir_, " && openssl ", arguments, " >>openssl.log 2>&1");
    return std::system(command.c_str()) == 0;
  }
  bool MakeCa(const std::string& name) const {
    return Run(absl::StrCat("req -x509 -config ca.cnf -extensions v3_ca -newkey ec -pkeyopt "
                            "ec_paramgen_curve:prime256v1 -nodes -days 2 -keyout ",
                            name, ".key -out ", name, ".pem"));
  }
  // A certificate signed by "ca" with the extensions of section `name` of leaf.cnf.
  bool MakeLeaf(const std::string& name, const std::string& common_name, int serial) const {
    return Run(absl::StrCat("req -new -config ca.cnf -newkey ec -pkeyopt "
                            "ec_paramgen_curve:prime256v1 -nodes -subj '/CN=",
                            common_name, "' -keyout ", name, ".key -out ", name, ".csr")) &&
           Run(absl::StrCat("x509 -req -in ", name, ".csr -CA ca.pem -CAkey ca.key -set_serial ",
                            serial, " -days 2 -extfile leaf.cnf -extensions ", name, " -out ",
                            name, ".pem"));
  }

  std::string dir_;
  bool ok_ = false;
};

}  // namespace ikd::testing
