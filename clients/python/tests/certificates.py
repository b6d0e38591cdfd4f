"""A test CA with a server certificate (localhost, 127.0.0.1) and a client certificate, made by
the openssl command as tests/testing/test_certificates.h makes them for the C++ tests."""
import pathlib
import subprocess

CA_CONFIG = """[req]
distinguished_name = dn
prompt = no
[dn]
CN = ikd test CA
[v3_ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
"""
LEAF_CONFIG = """[server]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost,IP:127.0.0.1
[client]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = clientAuth
"""
EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


def make_certificates(directory):
    """Writes ca.pem, server.{pem,key} and client.{pem,key} into `directory`."""
    directory = pathlib.Path(directory)
    (directory / "ca.cnf").write_text(CA_CONFIG)
    (directory / "leaf.cnf").write_text(LEAF_CONFIG)

    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)

    openssl("req", "-x509", "-config", "ca.cnf", "-extensions", "v3_ca", *EC_KEY, "-days", "2",
            "-keyout", "ca.key", "-out", "ca.pem")
    for serial, name in enumerate(("server", "client"), start=2):
        openssl("req", "-new", "-config", "ca.cnf", *EC_KEY, "-subj", f"/CN=ikd test {name}",
                "-keyout", f"{name}.key", "-out", f"{name}.csr")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-set_serial", str(serial), "-days", "2", "-extfile", "leaf.cnf",
                "-extensions", name, "-out", f"{name}.pem")
