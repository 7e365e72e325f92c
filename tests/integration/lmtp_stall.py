#!/usr/bin/env python3
# lmtp_stall.py LISTEN_SOCKET UPSTREAM_SOCKET COUNT LOG: an LMTP relay between
# Postfix's lmtp client and Dovecot's LMTP socket (both unix sockets) that makes a
# delivery time out after Dovecot stored the message. It passes everything through,
# but for the first COUNT messages it swallows Dovecot's replies to the end of data
# (Dovecot has stored the message by then) and holds the connection, so Postfix's
# lmtp_data_done_timeout strikes, Postfix defers the message and delivers it again
# later: a duplicate the server made. Each message stalled is written to LOG as
# "stalled <Message-ID>" once its end of data went to Dovecot. Stopped by SIGTERM.
import os
import socket
import sys
import threading

listen_path, upstream_path, count, log_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
lock = threading.Lock()
stalled = 0


def relay_up(client, server, state):
    """Client to server, line by line, noting DATA, the Message-ID and the end of data.
    A stalled connection forwards nothing after its end of data: Postfix pipelines
    QUIT behind the dot, and Dovecot's answer to it (and its close) would end the
    wait for the final reply early, as a lost connection rather than a timeout."""
    global stalled
    buf = b""
    in_data = False
    msgid = b""
    try:
        while True:
            chunk = client.recv(65536)
            if not chunk:
                break
            if state["stall"]:
                continue
            buf += chunk
            upto = len(chunk)
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                line = line.rstrip(b"\r")
                if not in_data:
                    if line.upper() == b"DATA":
                        in_data, msgid = True, b""
                    continue
                if line == b".":
                    in_data = False
                    with lock:
                        stall = stalled < count
                        stalled += stall
                    if stall:
                        # decided before Dovecot can answer: the dot goes out below
                        state["stall"] = True
                        upto = len(chunk) - len(buf)
                        with open(log_path, "ab") as f:
                            f.write(b"stalled " + msgid + b"\n")
                        break
                elif not msgid and line.lower().startswith(b"message-id:"):
                    msgid = line.split(b":", 1)[1].strip()
            server.sendall(chunk[:upto])
    except OSError:
        pass
    for s in (server, client):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def relay_down(client, server, state):
    """Server to client, unless this connection is stalled: then Dovecot's replies
    are read and dropped until the client gives up."""
    try:
        while True:
            chunk = server.recv(65536)
            if not chunk:
                break
            if not state["stall"]:
                client.sendall(chunk)
    except OSError:
        pass
    try:
        client.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def serve(client):
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.connect(upstream_path)
    except OSError:
        client.close()
        return
    state = {"stall": False}
    up = threading.Thread(target=relay_up, args=(client, server, state), daemon=True)
    down = threading.Thread(target=relay_down, args=(client, server, state), daemon=True)
    up.start()
    down.start()
    up.join()
    down.join()
    client.close()
    server.close()


if os.path.exists(listen_path):
    os.unlink(listen_path)
lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
lsock.bind(listen_path)
os.chmod(listen_path, 0o666)  # Postfix's lmtp client runs as postfix
lsock.listen(64)
with open(log_path, "ab") as f:
    f.write(b"ready\n")
while True:
    c, _ = lsock.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
