// The real ikd with TLS and a tokens file, driven by the real ikctl with --tls_ca and
// --token_file / --token; and ikd's start-up refusals (bad tokens file, tokens in clear on a
// non-loopback address, a missing certificate), each naming the flag. Certificates come from
// the openssl command at test time.
#include "testing/integration_fixture.h"
#include "testing/test_certificates.h"

namespace ikd::integration {
namespace {

using ::testing::HasSubstr;

constexpr char kReadWrite[] = "rw-integration-token-0001";
constexpr char kReadOnly[] = "ro-integration-token-0002";

class SecurityCliTest : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    ASSERT_TRUE(certificates_.ok()) << certificates_.log();
    tokens_ = WriteFile("tokens", absl::StrCat("# test tokens\nread-write ", kReadWrite,
                                               "\nread-only ", kReadOnly, "\n"));
  }

  std::vector<std::string> SecureServerFlags() const {
    return {"--tls_cert=" + certificates_.File("server.pem"),
            "--tls_key=" + certificates_.File("server.key"), "--tokens_file=" + tokens_};
  }
  std::string TlsCa() const { return "--tls_ca=" + certificates_.File("ca.pem"); }

  ikd::testing::TestCertificates certificates_;
  std::string tokens_;
};

// ikctl with the CA and a read-write token file creates an arm over TLS, a read-only token lists
// it but cannot delete it (PERMISSION_DENIED), and no token is UNAUTHENTICATED.
TEST_F(SecurityCliTest, IkctlTalksTlsWithTokens) {
  StartServer(":memory:", SecureServerFlags());
  const std::string read_write_file = WriteFile("rw.token", std::string(kReadWrite) + "\n");
  RunResult created =
      Ikctl({TlsCa(), "--token_file=" + read_write_file, "arms", "create", "demo", kDemoArm});
  ASSERT_EQ(created.exit_code, 0) << Describe(created);

  RunResult listed =
      Ikctl({TlsCa(), std::string("--token=") + kReadOnly, "arms", "list", "--format=csv"});
  ASSERT_EQ(listed.exit_code, 0) << Describe(listed);
  EXPECT_THAT(listed.out, HasSubstr("arms/demo"));

  RunResult denied =
      Ikctl({TlsCa(), std::string("--token=") + kReadOnly, "arms", "delete", "demo"});
  EXPECT_EQ(denied.exit_code, 1) << Describe(denied);
  EXPECT_THAT(denied.err, HasSubstr("PERMISSION_DENIED"));

  RunResult anonymous = Ikctl({TlsCa(), "arms", "list"});
  EXPECT_EQ(anonymous.exit_code, 1) << Describe(anonymous);
  EXPECT_THAT(anonymous.err, HasSubstr("UNAUTHENTICATED"));

  RunResult plaintext = Ikctl({std::string("--token=") + kReadOnly, "arms", "list"});
  EXPECT_EQ(plaintext.exit_code, 1) << Describe(plaintext);
  EXPECT_THAT(plaintext.err, HasSubstr("UNAVAILABLE"));
}

// ikd refuses to start, naming the flag: a malformed tokens file line (by number, without the
// token), tokens on a plaintext non-loopback address, a missing certificate file.
TEST_F(SecurityCliTest, StartupRefusalsNameTheFlag) {
  const std::string bad_tokens =
      WriteFile("bad-tokens", "read-write good-token-000000001\nsuperuser secret-000000000002\n");
  RunResult bad = RunProcess({kIkd, "--store=:memory:", "--listen=127.0.0.1:0",
                              "--tokens_file=" + bad_tokens});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("--tokens_file"));
  EXPECT_THAT(bad.err, HasSubstr("line 2: the role must be read-write or read-only"));
  EXPECT_THAT(bad.err, ::testing::Not(HasSubstr("secret-000000000002")));

  RunResult in_clear = RunProcess(
      {kIkd, "--store=:memory:", "--listen=0.0.0.0:0", "--tokens_file=" + tokens_});
  EXPECT_NE(in_clear.exit_code, 0);
  EXPECT_THAT(in_clear.err, HasSubstr("would send tokens in clear"));

  RunResult missing = RunProcess({kIkd, "--store=:memory:", "--listen=127.0.0.1:0",
                                  "--tls_cert=" + dir_ + "/none.pem",
                                  "--tls_key=" + certificates_.File("server.key")});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_THAT(missing.err, HasSubstr("--tls_cert: cannot read"));
}

}  // namespace
}  // namespace ikd::integration
