"""A throwaway OpenLDAP directory for the tests: Debian's slapd on
loopback, in a temporary directory, with a generated slapd.conf, a few
people loaded with slapadd, and a certificate authority made here that
signs the server's certificate (ldaps:// and StartTLS).

People (uid / password / mail / cn):
  ada / ada-secret / ada@example.com / Ada Lovelace (displayName "Ada L.")
  bob / bob-secret / bob@example.com / Bob Builder
  nomail / nomail-secret / (no mail) / No Mail
  twin / twin-secret in ou=people and ou=others (two entries)
The root account cn=admin,dc=example,dc=com has the password root-secret.
"""

import datetime
import ipaddress
import os
import shutil
import socket
import subprocess
import time

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from live_server import free_port, stop_process


SLAPD = shutil.which("slapd") or "/usr/sbin/slapd"
SLAPADD = shutil.which("slapadd") or "/usr/sbin/slapadd"
SCHEMAS = "/etc/ldap/schema"
MODULES = "/usr/lib/ldap"
BASE_DN = "dc=example,dc=com"
ROOT_DN = "cn=admin,dc=example,dc=com"
ROOT_PASSWORD = "root-secret"
# How long the server may take to start listening (it usually takes well
# under a second).
START_TIMEOUT = 30

PEOPLE_LDIF = """\
dn: dc=example,dc=com
objectClass: dcObject
objectClass: organization
o: Example
dc: example

dn: ou=people,dc=example,dc=com
objectClass: organizationalUnit
ou: people

dn: ou=others,dc=example,dc=com
objectClass: organizationalUnit
ou: others

dn: uid=ada,ou=people,dc=example,dc=com
objectClass: inetOrgPerson
uid: ada
cn: Ada Lovelace
sn: Lovelace
displayName: Ada L.
mail: ada@example.com
userPassword: ada-secret

dn: uid=bob,ou=people,dc=example,dc=com
objectClass: inetOrgPerson
uid: bob
cn: Bob Builder
sn: Builder
mail: bob@example.com
userPassword: bob-secret

dn: uid=nomail,ou=people,dc=example,dc=com
objectClass: inetOrgPerson
uid: nomail
cn: No Mail
sn: Mail
userPassword: nomail-secret

dn: uid=twin,ou=people,dc=example,dc=com
objectClass: inetOrgPerson
uid: twin
cn: Twin One
sn: One
mail: twin1@example.com
userPassword: twin-secret

dn: uid=twin,ou=others,dc=example,dc=com
objectClass: inetOrgPerson
uid: twin
cn: Twin Two
sn: Two
mail: twin2@example.com
userPassword: twin-secret
"""


def available():
    """True when Debian's slapd and slapadd are installed."""
    return os.path.exists(SLAPD) and os.path.exists(SLAPADD) and os.path.isdir(SCHEMAS)


def _name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_authority(directory, label):
    """A self-signed certificate authority; returns (its key, its
    certificate), its certificate also written as <label>-ca.pem."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(_name(f"bugsvc test CA {label}"))
            .issuer_name(_name(f"bugsvc test CA {label}")).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True,
                                         crl_sign=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    with open(os.path.join(directory, f"{label}-ca.pem"), "wb") as out:
        out.write(cert.public_bytes(serialization.Encoding.PEM))
    return key, cert


def make_server_certificate(directory, authority):
    """The server's key and certificate for localhost and 127.0.0.1, signed
    by `authority`; returns (certificate path, key path)."""
    ca_key, ca_cert = authority
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(_name("localhost"))
            .issuer_name(ca_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName([
                x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False)
            .sign(ca_key, hashes.SHA256()))
    cert_path = os.path.join(directory, "server.pem")
    key_path = os.path.join(directory, "server.key")
    with open(cert_path, "wb") as out:
        out.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as out:
        out.write(key.private_bytes(serialization.Encoding.PEM,
                                    serialization.PrivateFormat.TraditionalOpenSSL,
                                    serialization.NoEncryption()))
    os.chmod(key_path, 0o600)
    return cert_path, key_path


class Directory:
    """A running slapd: ldap_port (plain and StartTLS), ldaps_port, the
    trusted authority's certificate (ca_file) and another authority's
    (other_ca_file, which did not sign the server's certificate)."""

    def __init__(self, directory):
        self.directory = str(directory)
        os.makedirs(self.directory, exist_ok=True)
        self.ldap_port = free_port()
        self.ldaps_port = free_port()
        authority = make_authority(self.directory, "trusted")
        make_authority(self.directory, "other")
        self.ca_file = os.path.join(self.directory, "trusted-ca.pem")
        self.other_ca_file = os.path.join(self.directory, "other-ca.pem")
        self.cert_file, self.key_file = make_server_certificate(self.directory, authority)
        self.process = None

    def _config(self):
        data = os.path.join(self.directory, "data")
        os.makedirs(data, exist_ok=True)
        path = os.path.join(self.directory, "slapd.conf")
        schemas = "".join(f"include {SCHEMAS}/{name}.schema\n"
                          for name in ("core", "cosine", "inetorgperson", "nis"))
        with open(path, "w") as out:
            out.write(
                f"{schemas}"
                f"modulepath {MODULES}\n"
                "moduleload back_mdb\n"
                f"pidfile {self.directory}/slapd.pid\n"
                f"TLSCACertificateFile {self.ca_file}\n"
                f"TLSCertificateFile {self.cert_file}\n"
                f"TLSCertificateKeyFile {self.key_file}\n"
                "access to attrs=userPassword by self write by anonymous auth by * none\n"
                "access to * by * read\n"
                "database mdb\n"
                "maxsize 10485760\n"
                f"suffix \"{BASE_DN}\"\n"
                f"rootdn \"{ROOT_DN}\"\n"
                f"rootpw {ROOT_PASSWORD}\n"
                f"directory {data}\n")
        return path

    def start(self):
        """Load the people and start slapd; returns once it answers."""
        config = self._config()
        ldif = os.path.join(self.directory, "people.ldif")
        with open(ldif, "w") as out:
            out.write(PEOPLE_LDIF)
        subprocess.run([SLAPADD, "-f", config, "-l", ldif], check=True, capture_output=True,
                       timeout=60)
        urls = f"ldap://127.0.0.1:{self.ldap_port}/ ldaps://127.0.0.1:{self.ldaps_port}/"
        self.log = open(os.path.join(self.directory, "slapd.log"), "wb")
        self.process = subprocess.Popen([SLAPD, "-f", config, "-h", urls, "-d", "0"],
                                        stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT
        for port in (self.ldap_port, self.ldaps_port):
            while True:
                if self.process.poll() is not None:
                    raise RuntimeError("slapd stopped: " + self._log_text())
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        self.stop()
                        raise RuntimeError("slapd did not listen: " + self._log_text()) \
                            from None
                    time.sleep(0.05)
        return self

    def _log_text(self):
        with open(os.path.join(self.directory, "slapd.log"), "rb") as source:
            return source.read().decode("utf-8", "replace")[-2000:]

    def stop(self):
        if self.process is not None:
            stop_process(self.process)
            self.log.close()
        self.process = None
