#!/usr/bin/env python3
# imap_raw.py: a raw IMAP client for the reference server's tests, for what curl
# cannot do: hold IDLE while a message is delivered (smtplib, the standard
# library's client) and see what the server pushes, and send literals of both
# kinds. Python's imaplib has no IDLE before 3.14, so commands are written by hand.
# Prints what it saw; exits 0 when the server did what the mode expects, 1 otherwise.
import smtplib
import socket
import sys

TIMEOUT = 10


class Imap:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.buf = b""
        self.n = 0
        greeting = self.line()
        if not greeting.startswith(b"* OK"):
            die("greeting: %r" % greeting)

    def line(self):
        while b"\r\n" not in self.buf:
            data = self.s.recv(65536)
            if not data:
                die("connection closed; had %r" % self.buf)
            self.buf += data
        l, self.buf = self.buf.split(b"\r\n", 1)
        return l

    def send(self, raw):
        self.s.sendall(raw)

    def cmd(self, text):
        """Sends a command; returns (untagged lines, tagged line)."""
        self.n += 1
        tag = b"t%d" % self.n
        self.send(tag + b" " + text + b"\r\n")
        return self.until(tag)

    def until(self, tag):
        got = []
        while True:
            l = self.line()
            if l.startswith(tag + b" "):
                return got, l
            got.append(l)


def die(msg):
    print("imap_raw: " + msg)
    sys.exit(1)


def login_select(port, user, pw):
    c = Imap(port)
    _, t = c.cmd(b"LOGIN " + user.encode() + b" " + pw.encode())
    if b" OK" not in t:
        die("LOGIN: %r" % t)
    u, t = c.cmd(b"SELECT INBOX")
    if b" OK" not in t:
        die("SELECT: %r" % t)
    exists = [l for l in u if l.endswith(b" EXISTS")]
    return c, int(exists[0].split()[1])


def deliver(smtp_port, rcpt, subject):
    with smtplib.SMTP("127.0.0.1", smtp_port, timeout=TIMEOUT) as s:
        s.sendmail("s@test.local", [rcpt], "Subject: %s\r\n\r\nbody\r\n" % subject)


def mode_idle(port, user, pw, smtp_port, expect_push):
    """IDLE, a delivery, DONE: EXISTS before the DONE's OK (pushed), or not (silent),
    then a NOOP must show it in both cases."""
    c, n = login_select(port, user, pw)
    c.n += 1
    tag = b"t%d" % c.n
    c.send(tag + b" IDLE\r\n")
    l = c.line()
    if not l.startswith(b"+"):
        die("IDLE not accepted: %r" % l)
    deliver(smtp_port, user, "idle")
    # The server lists the mailbox for an idle session before its SMTP side answers
    # 250, and reads DONE only once that listing is in: what it pushes comes first.
    c.send(b"DONE\r\n")
    got, t = c.until(tag)
    if b" OK" not in t:
        die("IDLE's end: %r" % t)
    pushed = [l for l in got if l == b"* %d EXISTS" % (n + 1)]
    print("during IDLE: %r" % got)
    if expect_push and not pushed:
        die("no EXISTS pushed during IDLE")
    if not expect_push and got:
        die("pushed during a silent IDLE: %r" % got)
    u, t = c.cmd(b"NOOP")
    print("NOOP: %r" % u)
    if expect_push and u:
        die("NOOP repeated what IDLE pushed: %r" % u)
    if not expect_push and b"* %d EXISTS" % (n + 1) not in u:
        die("NOOP after a silent IDLE did not show the new message: %r" % u)
    c.cmd(b"LOGOUT")


def mode_literals(port, user, pw):
    c = Imap(port)
    # A synchronising literal waits for "+"; LITERAL+ does not.
    c.n += 1
    tag = b"t%d" % c.n
    u = user.encode()
    c.send(tag + b" LOGIN {%d}\r\n" % len(u))
    l = c.line()
    if not l.startswith(b"+"):
        die("no continuation for a synchronising literal: %r" % l)
    c.send(u + b" {%d+}\r\n" % len(pw) + pw.encode() + b"\r\n")
    got, t = c.until(tag)
    if b" OK" not in t:
        die("LOGIN with literals: %r" % t)
    print("LOGIN with literals: %r" % t)
    # A user name with a newline in a literal: refused, and not written to the log
    # (the caller checks the log).
    c2 = Imap(port)
    name = b"x\nFAKE: injected line"
    _, t = c2.cmd(b"LOGIN {%d+}\r\n%s pw" % (len(name), name))
    if b"NO [AUTHENTICATIONFAILED]" not in t:
        die("a user name with a newline: %r" % t)
    # A literal beyond the bound: refused before it is sent.
    c.n += 1
    tag = b"t%d" % c.n
    c.send(tag + b" LOGIN {1000000}\r\n")
    l = c.line()
    if not l.startswith(b"* BAD"):
        die("a 1 MB synchronising literal was not refused: %r" % l)
    print("big literal: %r" % l)
    # A LITERAL+ beyond the bound is read, dropped, and the command refused.
    c.send(b"x LOGIN {100000+}\r\n" + b"a" * 100000 + b" b\r\n")
    l = c.line()
    if not l.startswith(b"* BAD"):
        die("a 100 kB LITERAL+ was not refused: %r" % l)
    _, t = c.cmd(b"NOOP")
    if b" OK" not in t:
        die("session not usable after a dropped literal: %r" % t)
    print("big LITERAL+: %r; then NOOP %r" % (l, t))
    # A line beyond the line bound ends the session with BYE.
    c.send(b"y " + b"N" * 70000 + b"\r\n")
    l = c.line()
    if not l.startswith(b"* BYE"):
        die("an over-long line was not refused: %r" % l)
    print("long line: %r" % l)


def main():
    mode = sys.argv[1]
    if mode in ("idle", "idle-silent"):
        mode_idle(int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), mode == "idle")
    elif mode == "literals":
        mode_literals(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    else:
        die("unknown mode " + mode)


if __name__ == "__main__":
    main()
