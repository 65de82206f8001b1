"""Who may see what: the access labels of a source document and the one visibility rule for derived items.

A derived item — a wiki line, a relation, a version chain link, a learned
fact, a cached answer — is visible only if EVERY source it was derived from is
readable by the user (`visible`). Sources travel as structured records
(source path → `Label`), never re-parsed from rendered text. An entity is
different in one respect: each document that names it attests it on its own,
so it is visible when ONE of its attesting sources is (`attested`); what it is
said to be, by whom and when, is a derived item again.

Every check fails closed: a missing user is `PUBLIC` (`principal`), never
"everything"; an operator who needs everything passes `ALL_ACCESS`.

A document's labels are read by one schema (`labels_of`): either an ``access``
mapping whose keys must be ``department`` and ``security_level`` (any other key
is refused, naming it), or those two keys at the top of the metadata.
"""
from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Optional

from lambdarag import User
from lambdarag.state import PUBLIC, Record

ACCESS_SECTION = "access"
ACCESS_KEYS = ("department", "security_level")
ACCESS_LIKE = re.compile(r"depart|dept|secur|clearance|classif|confiden|secret|access|permission|visib|level"
                         r"|restrict|sensitiv|部门|密级|权限|保密|级别|机密|内部|受限", re.IGNORECASE)
ACCESS_WORDS = frozenset({"acl", "acls", "allow", "allowed", "deny", "denied", "audience", "readers", "groups", "roles",
                          "private", "public", "internal"})
"""Keys that look like access labels but are none (a stem above, or one of these whole words): refused, since the
author meant them to restrict the document and they would leave it public (inside an ``access`` section every
unknown key is refused, whatever its name)."""


class Label(Record):
    """Access labels of one source document."""

    department: Optional[str] = None
    security_level: int = 0

    def visible_to(self, user: Optional[User]) -> bool:
        """Returns whether `user` may read the document (no user: the public may)."""
        return principal(user).may_read(self.department, self.security_level)


HIDDEN = Label(security_level=1 << 30)
"""The label of a source nothing describes: nobody but an operator may read it (unknown provenance fails closed)."""


class AccessLabelError(ValueError):
    """A document's access labels break the schema; `key` names the metadata key at fault."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def principal(user: Optional[User]) -> User:
    """Returns who a check is for: `user`, or `PUBLIC` when there is none."""
    return PUBLIC if user is None else user


def visible(sources: Iterable[str], labels: Mapping[str, Label], user: Optional[User]) -> bool:
    """Returns whether an item derived from `sources` is visible: every one is readable (an unknown source is not,
    except to an operator)."""
    user = principal(user)
    if user.all_access:
        return True
    return all(s in labels and labels[s].visible_to(user) for s in sources)


def attested(labels: Mapping[str, Label], user: Optional[User]) -> bool:
    """Returns whether some attesting source is readable (an item with no recorded source attests nothing, except
    to an operator)."""
    user = principal(user)
    return user.all_access or any(label.visible_to(user) for label in labels.values())


def access_like(key: Any) -> bool:
    """Returns whether a metadata key looks like an access label (`ACCESS_LIKE`, `ACCESS_WORDS`)."""
    return str(key).strip().lower() in ACCESS_WORDS or bool(ACCESS_LIKE.search(str(key)))


def nested_label(meta: Mapping[str, Any]) -> Optional[tuple[str, str]]:
    """Returns (top-level key, dotted path) of the first access label found nested below the top of `meta` (outside
    the ``access`` section), e.g. ``metadata.department``; None when there is none. Walks without recursion."""
    stack: list[tuple[str, str, Any]] = [(str(k), str(k), v) for k, v in meta.items() if k != ACCESS_SECTION]
    while stack:
        top, path, value = stack.pop()
        items = value.items() if isinstance(value, Mapping) else enumerate(value) if isinstance(value, list) else ()
        for key, inner in items:
            if isinstance(value, Mapping) and (key in ACCESS_KEYS or key == ACCESS_SECTION or access_like(key)):
                return top, f"{path}.{key}"
            stack.append((top, f"{path}.{key}", inner))
    return None


def labels_of(meta: Mapping[str, Any]) -> Label:
    """Returns the access labels in a document's metadata, or raises `AccessLabelError` naming the key at fault:
    an unknown key in the ``access`` section (or, at the top, a key that looks like an access label), an access
    label nested anywhere else (``metadata: {department: …}``), both forms at once, a department that is not one
    non-empty name, or a level that is not an integer ≥ 0.

    Every refusal fails closed: the reader skips the document, so nobody reads it until its labels are fixed.
    """
    nested = nested_label(meta)
    if nested is not None:
        raise AccessLabelError(nested[0], f"access key {nested[1]!r} is nested: the access keys are "
                                          f"{' and '.join(ACCESS_KEYS)}, at the top or under {ACCESS_SECTION}:")
    section = meta.get(ACCESS_SECTION)
    flat = [k for k in ACCESS_KEYS if k in meta]
    if section is not None:
        if not isinstance(section, Mapping):
            raise AccessLabelError(ACCESS_SECTION, f"{ACCESS_SECTION} must be a mapping of "
                                                   f"{' and '.join(ACCESS_KEYS)}, got {type(section).__name__}")
        if flat:
            raise AccessLabelError(flat[0], f"access key {flat[0]!r} is given both at the top and in the "
                                            f"{ACCESS_SECTION} section; give each label once")
        unknown = [str(k) for k in section if k not in ACCESS_KEYS]
        if unknown:
            raise AccessLabelError(ACCESS_SECTION, f"unknown access key {ACCESS_SECTION}.{unknown[0]}: the access "
                                                   f"keys are {' and '.join(ACCESS_KEYS)}")
        labels, prefix = section, f"{ACCESS_SECTION}."
    else:
        for key in meta:
            if key not in ACCESS_KEYS and access_like(key):
                raise AccessLabelError(str(key), f"unknown access key {key!r}: the access keys are "
                                                 f"{' and '.join(ACCESS_KEYS)} (a misspelt key would make the "
                                                 f"document public)")
        labels, prefix = meta, ""
    department = labels.get("department")
    if "department" in labels and (not isinstance(department, (str, int)) or isinstance(department, bool)
                                   or not str(department).strip()):
        raise AccessLabelError("department", f"{prefix}department must be one non-empty name (leave the key out "
                                             f"for a public document), got {department!r}")
    level = labels.get("security_level", 0)
    if isinstance(level, bool) or not isinstance(level, (int, str)) or not re.fullmatch(r"[0-9]+", str(level).strip()):
        raise AccessLabelError("security_level", f"{prefix}security_level must be an integer ≥ 0, got {level!r}")
    return Label(department=str(department).strip() if department is not None else None, security_level=int(level))
