"""The least PDF a printer takes: numbered objects and their cross-reference table. The
printables (boards, calibration patterns, pieces) draw their pages as PDF operators and
hand their objects here; object 1 must be the document's catalogue."""

from __future__ import annotations


def pdf_file(objects: list[bytes]) -> bytes:
    """A PDF 1.4 file of `objects` (each an object's body, numbered from 1 in order)."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)
