"""The call graph, unwind data and instructions of a cross-built x64 PE image (issue 9 §1, §7).

Shared by `scripts/panic-reach.py` (which entry points reach panic machinery) and
`scripts/kernel-constraints.py` (stack frames and floating-point use of the driver).

Functions are delimited by their symbols (the PDB's public symbols for the MSVC-built `.sys`, the
COFF symbol table that mingw's linker keeps in the DLL) and by the `.pdata` unwind table. Edges:

* direct: every `call`/`jmp`/`jcc` whose target lies in another function;
* fall-through: a function whose last instruction is not a `ret`/`jmp`/`ud2`/`int3` (before its
  padding) continues
  into the next one;
* address taken: an instruction's RIP-relative operand that is a function (a function pointer is
  formed, so it may be called), or a data word table there — a Rust vtable (`drop`, size, align,
  methods…) or an array of function pointers — whose function entries are then edges.

The last kind is how indirect calls are accounted for: a `dyn Trait` call can only reach a
method of a vtable somebody referenced, and the reference is an edge from the function that made
the trait object. It does not see a vtable made outside the analysed roots (e.g. a trait object
built in `OpenPerformanceData` and called in `CollectPerformanceData`), which is why
`panic-reach.py` also roots every implementor of the DLL's traits by name.

Needs `llvm-objdump` and, for the `.sys`, `llvm-pdbutil` (Debian `llvm`).
"""
import re
import struct
import subprocess
from bisect import bisect_right


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


TERMINATORS = ("ret", "jmp", "ud2", "int3")
PADDING = ("nop", "int3", "data16")
INSN = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*?)\s*$")
DIRECT = re.compile(r"^(?:call|jmp|j[a-z]+)$")
TARGET = re.compile(r"^0x([0-9a-f]+)")
RIPREL = re.compile(r"\[rip [+-] \d+\].*#\s*0x([0-9a-f]+)")

# UNWIND_CODE operations (x64 exception handling: "struct UNWIND_CODE").
UWOP_PUSH_NONVOL, UWOP_ALLOC_LARGE, UWOP_ALLOC_SMALL, UWOP_SET_FPREG = 0, 1, 2, 3
UWOP_SAVE_NONVOL, UWOP_SAVE_NONVOL_FAR = 4, 5
UWOP_SAVE_XMM128, UWOP_SAVE_XMM128_FAR, UWOP_PUSH_MACHFRAME = 8, 9, 10
UNW_FLAG_CHAININFO = 4


class Image:
    """One PE image: sections, functions, instructions, call graph, unwind frames."""

    def __init__(self, path, pdb=None):
        self.path = path
        with open(path, "rb") as f:
            self.raw = f.read()
        self._parse_headers()
        self.names = {}
        if pdb:
            self._symbols_from_pdb(pdb)
        else:
            self._symbols_from_coff()
        self.pdata = self._parse_pdata()
        starts = set(self.names) | {b for b, _e, _u in self.pdata}
        self.starts = sorted(a for a in starts if self.in_text(a))
        self._disassemble()
        self._build_edges()

    # ---- PE structure -------------------------------------------------------------------

    def _parse_headers(self):
        raw = self.raw
        pe = struct.unpack_from("<I", raw, 0x3C)[0]
        if raw[pe:pe + 4] != b"PE\0\0":
            raise SystemExit(f"{self.path}: not a PE image")
        nsec = struct.unpack_from("<H", raw, pe + 6)[0]
        opt_size = struct.unpack_from("<H", raw, pe + 20)[0]
        opt = pe + 24
        if struct.unpack_from("<H", raw, opt)[0] != 0x20B:
            raise SystemExit(f"{self.path}: not PE32+")
        self.base = struct.unpack_from("<Q", raw, opt + 24)[0]
        self.sections = []
        for i in range(nsec):
            h = pe + 24 + opt_size + 40 * i
            name = raw[h:h + 8].rstrip(b"\0").decode("ascii", "replace")
            vsize, rva, rawsize, rawptr = struct.unpack_from("<IIII", raw, h + 8)
            self.sections.append((name, self.base + rva, vsize, rawptr, rawsize))
        text = [s for s in self.sections if s[0] == ".text"]
        if not text:
            raise SystemExit(f"{self.path}: no .text section")
        self.text_va, self.text_size = text[0][1], text[0][2]

    def in_text(self, va):
        return self.text_va <= va < self.text_va + self.text_size

    def section_of(self, va):
        for s in self.sections:
            if s[1] <= va < s[1] + s[2]:
                return s
        return None

    def read(self, va, n):
        """`n` bytes at `va` from the file (None if not file-backed)."""
        s = self.section_of(va)
        if s is None:
            return None
        off = va - s[1]
        if off + n > s[4]:
            return None
        return self.raw[s[3] + off:s[3] + off + n]

    def qword(self, va):
        b = self.read(va, 8)
        return None if b is None else struct.unpack("<Q", b)[0]

    def _parse_pdata(self):
        s = [s for s in self.sections if s[0] == ".pdata"]
        if not s:
            return []
        _name, va, vsize, _rawptr, _rawsize = s[0]
        out = []
        for off in range(0, vsize - 11, 12):
            b, e, u = struct.unpack("<III", self.read(va + off, 12))
            if b == 0 and e == 0:
                break
            out.append((self.base + b, self.base + e, self.base + u))
        return out

    # ---- symbols ------------------------------------------------------------------------

    def _symbols_from_pdb(self, pdb):
        for m in re.finditer(
            r"S_PUB32 \[size = \d+\] `([^`]*)`\s+flags = function, addr = 0001:(\d+)",
            run("llvm-pdbutil", "dump", "-publics", pdb),
        ):
            self._name(self.text_va + int(m.group(2)), m.group(1))

    def _name(self, va, name):
        """Several names for one address (aliases such as `.weak.memset.default.…` next to
        `memset`): keep the first that does not start with a dot."""
        old = self.names.get(va)
        if old is None or (old.startswith(".") and not name.startswith(".")):
            self.names[va] = name

    def _symbols_from_coff(self):
        for line in run("llvm-nm", "--defined-only", self.path).splitlines():
            f = line.split(None, 2)
            if len(f) == 3 and f[1] in "Tt":
                va = int(f[0], 16)
                if self.in_text(va):
                    self._name(va, f[2])

    def label(self, a):
        return self.names.get(a, f"fn@{a:#x}")

    def pretty(self, a):
        """The demangled name; for a function without a symbol (internal after LTO), its
        address and who calls or references it."""
        if not hasattr(self, "_pretty"):
            addrs = sorted(self.names)
            out = subprocess.run(["llvm-cxxfilt"], input="\n".join(self.names[x] for x in addrs),
                                 check=True, capture_output=True, text=True).stdout.splitlines()
            self._pretty = dict(zip(addrs, out)) if len(out) == len(addrs) else dict(self.names)
        if a in self._pretty:
            return self._pretty[a]
        users = sorted({self._pretty.get(f, f"fn@{f:#x}") for f in self.starts
                        if a in self.edges.get(f, ())})
        how = "referenced by" if all(a in self.address_taken.get(f, ()) for f in self.starts
                                     if a in self.edges.get(f, ())) else "called from"
        return f"fn@{a:#x} ({how} {', '.join(users[:2])}{', ...' if len(users) > 2 else ''})"

    def owner(self, addr):
        i = bisect_right(self.starts, addr) - 1
        return self.starts[i] if i >= 0 else None

    def is_start(self, va):
        i = bisect_right(self.starts, va) - 1
        return i >= 0 and self.starts[i] == va

    # ---- instructions and edges ---------------------------------------------------------

    def _disassemble(self):
        """`self.insns[fn]`: that function's (address, mnemonic, operands) in order."""
        self.insns = {s: [] for s in self.starts}
        out = run("llvm-objdump", "-d", "--no-show-raw-insn", "-M", "intel",
                  "--section=.text", self.path)
        for line in out.splitlines():
            m = INSN.match(line)
            if not m:
                continue
            addr = int(m.group(1), 16)
            fn = self.owner(addr)
            if fn is None:
                continue
            ops = m.group(3)
            self.insns[fn].append((addr, m.group(2), ops))

    def _table_targets(self, va):
        """Function entries of a vtable or function-pointer array at `va` (data)."""
        words = []
        for i in range(256):
            w = self.qword(va + 8 * i)
            if w is None:
                break
            words.append(w)
        if len(words) >= 4 and (words[0] == 0 or self.is_start(words[0])) \
                and 0 < words[2] <= 4096 and words[2] & (words[2] - 1) == 0 \
                and words[1] % words[2] == 0 and self.is_start(words[3]):
            # A Rust vtable: drop_in_place (or NULL), size, align, then the methods.
            found = [words[0]] if words[0] else []
            for w in words[3:]:
                if not self.is_start(w):
                    break
                found.append(w)
            self.vtables[va] = found
            return found
        found = []
        for w in words:
            if not self.is_start(w):
                break
            found.append(w)
        return found

    def _build_edges(self):
        # `calls`: control transfers (call, tail jump, branch, fall-through) — what nests stack
        # frames; `edges`: those and the address-taken ones — what can run.
        self.calls = {s: set() for s in self.starts}
        self.edges = {s: set() for s in self.starts}
        self.address_taken = {s: set() for s in self.starts}
        self.vtables = {}
        self.indirect = {s: [] for s in self.starts}
        for i, fn in enumerate(self.starts):
            insns = self.insns[fn]
            for addr, mnem, ops in insns:
                if DIRECT.match(mnem):
                    t = TARGET.match(ops)
                    if t:
                        dst = self.owner(int(t.group(1), 16))
                        if dst is not None and dst != fn:
                            self.calls[fn].add(dst)
                            self.edges[fn].add(dst)
                        continue
                    if mnem in ("call", "jmp") and "__imp_" not in ops:
                        self.indirect[fn].append((addr, f"{mnem} {ops}"))
                r = RIPREL.search(ops)
                if r:
                    va = int(r.group(1), 16)
                    if self.is_start(va):
                        targets = [va]
                    elif self.in_text(va):
                        targets = []
                    else:
                        targets = self._table_targets(va)
                    for t in targets:
                        if t != fn:
                            self.edges[fn].add(t)
                            self.address_taken[fn].add(t)
            body = [x for x in insns if not x[1].startswith(PADDING)]
            if body and not body[-1][1].startswith(TERMINATORS) and i + 1 < len(self.starts):
                self.calls[fn].add(self.starts[i + 1])
                self.edges[fn].add(self.starts[i + 1])

    def reach(self, roots, edges=None):
        """Breadth-first: {function: predecessor} for everything reachable from `roots`."""
        edges = self.edges if edges is None else edges
        prev = {}
        queue = []
        for r in roots:
            if r not in prev:
                prev[r] = None
                queue.append(r)
        i = 0
        while i < len(queue):
            a = queue[i]
            i += 1
            for b in sorted(edges.get(a, ())):
                if b not in prev:
                    prev[b] = a
                    queue.append(b)
        return prev

    def chain_addrs(self, prev, a):
        out = []
        while a is not None:
            out.append(a)
            a = prev[a]
        return out

    # ---- unwind data --------------------------------------------------------------------

    def frame(self, fn):
        """The fixed stack frame `fn`'s prologue sets up, from its unwind info: bytes pushed
        and allocated below the return address (None if it has no `.pdata` entry: a leaf
        function that does not touch RSP)."""
        entry = next((p for p in self.pdata if p[0] == fn), None)
        if entry is None:
            return None
        size = 0
        u = entry[2]
        while True:
            hdr = self.read(u, 4)
            flags = hdr[0] >> 3
            count = hdr[2]
            codes = self.read(u + 4, 2 * count)
            j = 0
            while j < count:
                op, info = codes[2 * j + 1] & 0xF, codes[2 * j + 1] >> 4
                slot = lambda k: struct.unpack_from("<H", codes, 2 * (j + k))[0]  # noqa: E731
                if op == UWOP_PUSH_NONVOL:
                    size += 8
                elif op == UWOP_ALLOC_LARGE:
                    if info == 0:
                        size += slot(1) * 8
                        j += 1
                    else:
                        size += slot(1) | (slot(2) << 16)
                        j += 2
                elif op == UWOP_ALLOC_SMALL:
                    size += info * 8 + 8
                elif op in (UWOP_SAVE_NONVOL, UWOP_SAVE_XMM128):
                    j += 1
                elif op in (UWOP_SAVE_NONVOL_FAR, UWOP_SAVE_XMM128_FAR):
                    j += 2
                elif op == UWOP_PUSH_MACHFRAME:
                    size += 48 if info else 40
                j += 1
            if not flags & UNW_FLAG_CHAININFO:
                return size
            # Chained: the parent RUNTIME_FUNCTION follows the (even-padded) codes.
            off = u + 4 + 2 * (count + (count & 1))
            _b, _e, parent = struct.unpack("<III", self.read(off, 12))
            u = self.base + parent
