#!/usr/bin/env python3
"""Writes the well-formed inputs of fuzz_reply (tests/fuzz/fuzz_reply.c)
into tests/fuzz/reply/: for each call sequence, the replies (and a few
events) a worker would send, laid out as worker/call.h says, with the
harness's header fixing on. test_reply_replay requires every call they
answer to succeed, so a change of worker/call.h that they no longer fit
shows there; run this again then:

    python3 tests/fuzz/make_reply_seeds.py tests/fuzz/reply
"""
import os
import struct
import sys

out = sys.argv[1]
REPLY, EVENT = 2, 3
EV_LOG, EV_IU = 2, 3

def pad8(b):
    return b + b'\0' * (-len(b) % 8)

def rec(kind, op, body, payload=b''):
    payload = pad8(payload)
    h = struct.pack('<IHHQIIQQ', 0, kind, op, 0, len(body), 0, 0, len(payload))
    return h + body + payload

def reply(result, payload=b'', status=0):
    head = struct.pack('<iiIIQQ', status, 0, 4, 0, 0, 0)   # state 4: Step Mode
    return rec(REPLY, 0, head + result, payload)

def rng(off, ln):
    return struct.pack('<QQ', off, ln)

def values(t, nvr, nv, data, sizes=(0, 0)):
    return struct.pack('<IIQ', t, nvr, nv) + rng(0, 0) + rng(*data) + rng(*sizes)

def log_event(text=b'hello', cat=b'logEvents'):
    body = struct.pack('<iI', 0, 0) + rng(0, len(cat)) + rng(len(cat), len(text))
    return rec(EVENT, EV_LOG, body, cat + text)

def iu_event(t=0.0625):
    return rec(EVENT, EV_IU, struct.pack('<dBBBB4x', t, 1, 1, 0, 1))

def step_result(n_out, outputs, t=0.125, phase=3):
    # service_ns, then a Model Exchange integrator's counts (none: zero)
    return (struct.pack('<BBBBIIId', 0, 0, 0, 0, phase, 0, n_out, t) + rng(*outputs) +
            struct.pack('<Q4Q2I', 1000, 0, 0, 0, 0, 0, 0))

F64, I16, BOOL, STR, BIN = 1, 4, 10, 11, 12        # enum md_type

def full_step(t):
    descs = (values(F64, 3, 3, (192, 24)) + values(BOOL, 2, 2, (216, 2)) +
             values(I16, 1, 1, (224, 2)))
    vals = struct.pack('<3d', 1.0, 2.0, 3.0) + bytes([1, 0]) + b'\0' * 6 + struct.pack('<h', -7)
    return reply(step_result(3, (0, 192), t), descs + vals)

def compact_step(t):
    vals = struct.pack('<3d', 4.0, 5.0, 6.0) + bytes([0, 1]) + b'\0' * 6 + struct.pack('<h', 9)
    return reply(step_result(3, (0, 34), t), vals)

class Side(bytes):
    """Bytes for the side buffer, from its start (the harness's 0xffff record)."""

def reply_side(result, side_len, status=0):
    head = struct.pack('<iiIIQQ', status, 0, 4, 0, 0, 0)
    body = head + result
    return struct.pack('<IHHQIIQQ', 0, REPLY, 0, 0, len(body), 1, 0, side_len) + body

def dump(name, seq, records):
    data = bytes([seq, 1])
    for r in records:
        if isinstance(r, Side):
            data += struct.pack('<HH', 0xffff, len(r)) + r
        else:
            data += struct.pack('<H', len(r)) + r
    with open(os.path.join(out, name), 'wb') as f:
        f.write(data)

dump('seed-valid-get-f64', 0, [log_event(), reply(values(F64, 3, 3, (0, 24)), struct.pack('<3d', 1.5, -2.0, 3.25))])
dump('seed-valid-get-bool', 1, [reply(values(BOOL, 2, 2, (0, 2)), bytes([1, 0]))])
dump('seed-valid-get-string', 2, [reply(values(STR, 2, 2, (0, 6)), b'ab\0cd\0')])
dump('seed-valid-get-binary', 3, [reply(values(BIN, 2, 2, (16, 5), (0, 16)), struct.pack('<QQ', 2, 3) + b'\x01\x02\x03\x04\x05')])
dump('seed-valid-step-full-then-compact', 4, [iu_event(), full_step(0.125), compact_step(0.25)])
dump('seed-valid-step-repeat', 5, [full_step(0.125)] + [compact_step(t) for t in (0.25, 0.375, 0.5)])
dump('seed-valid-fmu-state', 6, [reply(struct.pack('<QQ', 1, 0) + rng(0, 0)),
                           reply(struct.pack('<QQ', 1, 16) + rng(0, 0)),
                           reply(struct.pack('<QQ', 1, 16) + rng(0, 16), bytes(range(16)))])
dump('seed-valid-discrete-status', 7, [reply(struct.pack('<BBBBB3xd', 0, 0, 0, 1, 1, 0.75)),
                                 reply(struct.pack('<iiqdQ', 4, 3, 0, 0.0, 0) + rng(0, 5), b'hello')])
dump('seed-valid-partial', 8, [reply(struct.pack('<IIQQQ', 2, 2, 2, 2, 0) + rng(0, 0) + rng(0, 0) + rng(0, 0) + rng(0, 16),
                               struct.pack('<2d', 0.5, 0.25)),
                         reply(struct.pack('<IIQ', 1, 0, 2) + rng(0, 16) + rng(16, 8) + rng(24, 16) + rng(40, 8),
                               struct.pack('<QQ', 0, 1) + struct.pack('<II', 2, 3) + struct.pack('<QQ', 0, 0) + struct.pack('<II', 1, 2))])
dump('seed-valid-iu-nested-get', 9, [iu_event(),
                                     reply(values(F64, 2, 2, (0, 16)), struct.pack('<2d', 0.5, 1.5)),
                                     reply(step_result(1, (0, 64)), values(F64, 3, 3, (64, 24)) + struct.pack('<3d', 1.0, 2.0, 3.0))])

def timing(n, a, b, c, payload):
    return reply(struct.pack('<II', n, 0) + rng(0, 0) + rng(*a) + rng(*b) + rng(*c), payload)

dump('seed-valid-clocks', 10, [timing(2, (0, 16), (0, 0), (16, 8), struct.pack('<2d2i', 0.1, 0.2, 1, 2)),
                               timing(2, (0, 16), (16, 16), (32, 8), struct.pack('<2Q2Q2i', 1, 2, 10, 10, 1, 1))])
dump('seed-valid-derivatives-deserialize-dependencies', 11, [
    reply(struct.pack('<IIQ', 2, 0, 2) + rng(0, 0) + rng(0, 0) + rng(0, 16), struct.pack('<2d', -1.0, 0.5)),
    reply(struct.pack('<QQ', 7, 16) + rng(0, 0)),
    reply(struct.pack('<IIQ', 1, 0, 3) + rng(0, 0) + rng(0, 0) + rng(0, 0) + rng(0, 0))])
dump('seed-valid-get-f64-side', 0, [Side(struct.pack('<3d', 0.25, 0.5, 0.75)),
                                   reply_side(values(F64, 3, 3, (0, 24)), 24)])
