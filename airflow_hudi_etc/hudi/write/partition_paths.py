"""Partition folder names as Java Hudi's key generators make them, and the values Java cannot read.

A partition value becomes one folder name: ``field=value`` (hive-style) or ``value``. A table
whose ``hoodie.properties`` says ``hoodie.datasource.write.partitionpath.urlencode=true`` (Java
0.14 and 1.1 record the writer's setting there) stores the value escaped as Hudi's
``PartitionPathEncodeUtils.escapePathName`` escapes it; the field name and ``=`` never are.

What real Java showed (tests/java/test_java_partition_paths.py):

* a ``:`` in a folder name makes the whole table unreadable by every Java line (Hadoop's ``Path``
  takes ``city=a:b`` for a URI with a scheme: ``URISyntaxException``), and Java's writers fail
  on it too;
* Hudi 1.0 and 1.1 read a string partition column back from the folder name, not from the data
  file, through ``unescapePathName`` whatever the table's urlencode setting: a value holding a
  ``%`` sequence Java decodes (``%41``) comes back decoded (``A``); ``__HIVE_DEFAULT_PARTITION__``
  comes back null; a folder name holding ``=`` in a non-hive-style table is read as
  ``name=value`` (``a=b`` comes back ``b``). Hudi 0.14 and 0.15 read the data file's value;
* an empty value is written by Java to ``__HIVE_DEFAULT_PARTITION__`` (our ``city=`` made the
  table unreadable by every Java line; without hive-style it put the files in the table's root).

Every other value tried (``%`` not followed by what Java decodes, spaces anywhere, ``{}``,
``?``, ``#``, ``[]``, ``*``, quotes, ``=`` in hive-style, non-ASCII) is read back as written.
"""

from __future__ import annotations

import unicodedata

from ..config.properties import URLENCODE_KEY

#: the folder Java writes a null or empty partition value to (and reads back as null, 1.x)
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
#: the longest folder name (UTF-8 bytes) most filesystems take (ext4, XFS, APFS, NTFS: 255)
MAX_FOLDER_BYTES = 255

#: the characters escapePathName escapes as ``%XX`` (upper-case hex): C0 controls, DEL and these
ESCAPED = frozenset(chr(c) for c in range(0x20)) | frozenset('"#%\'*/:=?\\\x7f{[]^')


def escape_path_name(value: str) -> str:
    """Hudi's ``escapePathName``: each character of :data:`ESCAPED` as ``%XX``; empty →
    :data:`DEFAULT_PARTITION`."""
    if not value:
        return DEFAULT_PARTITION
    return "".join(f"%{ord(c):02X}" if c in ESCAPED else c for c in value)


def _java_hex_digit(c: str) -> int | None:
    """``Character.digit(c, 16)``: Latin and fullwidth Latin a-f/A-F, and any BMP decimal digit
    (Unicode category Nd: Java reads ``%٤١`` as ``%41``, measured)."""
    if c in "0123456789abcdefABCDEF":
        return int(c, 16)
    o = ord(c)
    if 0xFF21 <= o <= 0xFF26 or 0xFF41 <= o <= 0xFF46:  # fullwidth A-F / a-f
        return (o & 0xF) + 9
    if o < 0x10000 and unicodedata.category(c) == "Nd":
        return unicodedata.decimal(c)
    return None


def _java_parse_hex2(s: str) -> int | None:
    """``Integer.parseInt(s, 16)`` of two characters (None: Java throws): a sign counts, so
    ``+f`` is 15 and ``-0`` is 0 (measured: ``%-0x`` is read back as ``\\x00x``)."""
    if s[0] in "+-":
        d = _java_hex_digit(s[1])
        return None if d is None else (d if s[0] == "+" else -d)
    hi, lo = _java_hex_digit(s[0]), _java_hex_digit(s[1])
    return None if hi is None or lo is None else hi * 16 + lo


def unescape_path_name(name: str) -> str:
    """What Java reads back from a folder name (``unescapePathName``, Hudi's and Spark's alike):
    ``%`` and the next two characters become one character when Java parses those as a
    non-negative hex number; anything else stays."""
    if "%" not in name:
        return name
    out, i, n = [], 0, len(name)
    while i < n:
        c = name[i]
        if c == "%" and i + 2 < n:
            code = _java_parse_hex2(name[i + 1:i + 3])
            if code is not None and code >= 0:
                out.append(chr(code))
                i += 3
                continue
        out.append(c)
        i += 1
    return "".join(out)


def folder_name(field: str, value: str, *, hive_style: bool, urlencode: bool) -> str:
    """The folder Java's key generator makes for ``value`` of partition field ``field``."""
    v = escape_path_name(value) if urlencode else value
    return f"{field}={v}" if hive_style else v


def _control(s: str) -> bool:
    return any(c < " " or c == "\x7f" for c in s)


def folder_problem(folder: str) -> str | None:
    """Why a folder name of a partition path cannot be one (whatever made it), or None."""
    if folder in ("", ".", "..") or folder.startswith("."):
        return "not a folder name ('', '.', '..') or a hidden one (Hudi's listing skips names starting with '.')"
    if _control(folder):
        return "a control character (U+0000..U+001F, DEL): hudi-rs cannot read a table holding one"
    if len(folder.encode("utf-8", "surrogatepass")) > MAX_FOLDER_BYTES:
        return f"over {MAX_FOLDER_BYTES} bytes"
    return None


def java_problem(name: str) -> str | None:
    """Why Java cannot read a folder name as written (urlencode off), or None."""
    if ":" in name:
        return "a ':' makes the whole table unreadable by Java (Hadoop's Path reads 'name:' as a URI scheme)"
    back = unescape_path_name(name)
    if back != name:
        return f"Hudi 1.x decodes '%XX' in folder names: it reads {back!r} back"
    return None


def value_problem(value: str, *, field: str, hive_style: bool, urlencode: bool) -> str | None:
    """Why ``value`` of partition field ``field`` is refused, or None. The rule: its folder
    (:func:`folder_name`) is one usable folder name that every Java line and hudi-rs read back
    as ``value``."""
    if value == "":
        return f"an empty value (Java writes it to {DEFAULT_PARTITION}; Hudi 1.x reads it back as null)"
    if value == DEFAULT_PARTITION:
        return "Hudi 1.x reads it back as null"
    if value in (".", ".."):
        return "not a folder name"
    if not urlencode and ("/" in value or "\\" in value):
        return "a '/' or '\\' would split it into folders"
    folder = folder_name(field, value, hive_style=hive_style, urlencode=urlencode)
    why = folder_problem(folder)
    if why or urlencode:  # escaped (escapePathName), a value is read back as written
        return why
    why = java_problem(value)
    if why:
        return why
    if not hive_style and "=" in value:
        return f"Hudi 1.x reads a folder name holding '=' as name=value: it reads {value.split('=')[-1]!r} back"
    return None


def _urlencode_fixes(value: str, why: str) -> bool:
    """Whether urlencode=true would store ``value`` as written (the message then says so)."""
    return value not in ("", DEFAULT_PARTITION, ".", "..") and not why.startswith(("not a", "over"))


def refusal(what: str, bad: list[tuple[str, str]], *, urlencode: bool) -> str:
    """The message of the :class:`InvalidInputError` refusing ``bad`` [(value, why)...] of ``what``."""
    shown = "; ".join(f"{v!r}: {why}" for v, why in bad[:3])
    more = f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""
    msg = (f"{what} {[v for v, _ in bad[:3]]}{more} are not usable folder names ({shown}). A partition value "
           f"must be one folder name that Java Hudi and hudi-rs read back as written: not empty, not "
           f"{DEFAULT_PARTITION}, not '.'/'..'/hidden, at most {MAX_FOLDER_BYTES} bytes with its 'field='; "
           f"unless the table has {URLENCODE_KEY}=true also no '/', '\\', ':', control character or "
           f"'%XX' Java decodes, and no '=' without hive-style folders "
           f"(docs/operations.md, 'Partition values')")
    if not urlencode and any(_urlencode_fixes(v, why) for v, why in bad):
        msg += (f". A table with {URLENCODE_KEY}=true (hudi-etc init --partition-urlencode, or a Java writer's "
                f"option when it creates the table) stores such values escaped, as Hudi's escapePathName does")
    return msg
