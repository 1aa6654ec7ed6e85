"""TLS session resumption against a Kafka SSL listener: for TLS 1.2 and 1.3,
one full handshake and one resumed, each carrying an ApiVersions v0 request.
Secrets go to KEYLOG (ssl.SSLContext.keylog_filename).

usage: tls_resume.py HOST PORT CAFILE KEYLOG
"""
import socket
import ssl
import struct
import sys


def api_versions(corr: int) -> bytes:
    client = b"kwire-tls-resume"
    body = struct.pack(">hhih", 18, 0, corr, len(client)) + client
    return struct.pack(">i", len(body)) + body


def read_exact(s: ssl.SSLSocket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = s.recv(n - len(out))
        if not chunk:
            raise EOFError("connection closed")
        out += chunk
    return out


def exchange(ctx, host, port, corr, session=None):
    raw = socket.create_connection((host, port), timeout=30)
    s = ctx.wrap_socket(raw, server_hostname=host, session=session)
    s.sendall(api_versions(corr))
    (size,) = struct.unpack(">i", read_exact(s, 4))
    (got,) = struct.unpack(">i", read_exact(s, size)[:4])
    assert got == corr, (got, corr)
    reused, sess, version = s.session_reused, s.session, s.version()
    # A clean close_notify: OpenSSL does not offer a session again that ended without one.
    try:
        s.unwrap()
    except (ssl.SSLError, OSError):
        pass
    s.close()
    return reused, sess, version


def main() -> int:
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    host, port, cafile, keylog = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    ok = True
    corr = 100
    for version in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(cafile)
        ctx.keylog_filename = keylog
        ctx.minimum_version = ctx.maximum_version = version
        _, sess, v1 = exchange(ctx, host, port, corr)
        reused, _, v2 = exchange(ctx, host, port, corr + 1, session=sess)
        print(f"{v1} full handshake, then {v2} resumed={reused}")
        ok &= reused
        corr += 10
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
