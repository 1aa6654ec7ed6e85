"""A TLS terminator in front of a plaintext Kafka listener, as stunnel or a
load balancer would be: accepts TLS on LISTEN_PORT with CERTKEY (PEM, key and
certificate) and relays the bytes to 127.0.0.1:KAFKA_PORT. OpenSSL resumes
sessions (TLS 1.2 tickets, TLS 1.3 PSK), which Kafka's own listener does not.

usage: tls_proxy.py LISTEN_PORT KAFKA_PORT CERTKEY
"""
import select
import socket
import ssl
import sys
import threading


def relay(client: ssl.SSLSocket, kafka_port: int) -> None:
    try:
        upstream = socket.create_connection(("127.0.0.1", kafka_port), timeout=30)
    except OSError:
        client.close()
        return
    socks = [client, upstream]
    try:
        while True:
            # SSL sockets may hold decrypted bytes select() cannot see.
            ready = [client] if client.pending() else select.select(socks, [], [], 60)[0]
            if not ready:
                return
            for s in ready:
                data = s.recv(65536)
                if not data:
                    return
                (upstream if s is client else client).sendall(data)
    except (OSError, ssl.SSLError):
        pass
    finally:
        for s in socks:
            try:
                s.close()
            except OSError:
                pass


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    listen_port, kafka_port, certkey = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certkey)
    srv = socket.create_server(("127.0.0.1", listen_port))
    print(f"tls proxy on 127.0.0.1:{listen_port} -> {kafka_port}", flush=True)
    while True:
        conn, _ = srv.accept()
        try:
            tls = ctx.wrap_socket(conn, server_side=True)
        except (OSError, ssl.SSLError):
            conn.close()
            continue
        threading.Thread(target=relay, args=(tls, kafka_port), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
