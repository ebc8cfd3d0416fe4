"""A packet file as the proposal-file commands see it, and what those commands return (pure).

:class:`Entry` is one file under ``.memzoi/proposals/`` (its preflight, the parsed packet or the redacted receipt
standing in for it, its identity tokens); :class:`Inventory` is all of them, identities checked unique by
:func:`~git_memzoi.memzoi.proposals.files.inventory`. :class:`ApplyResult` and :class:`RejectResult` say what a
resolution did. :mod:`~git_memzoi.memzoi.proposals.files` re-exports every name here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from git_memzoi.errors import InputError
from git_memzoi.memzoi.proposals.packets import identity_token

if TYPE_CHECKING:
    from git_memzoi.memzoi.proposals.packets import Packet
    from git_memzoi.memzoi.proposals.receipts import Preflight

NOT_FOUND = "no proposal packet has that id (see `git memzoi proposal-files list`)"


class ProposalNotFound(InputError):
    """No packet has that identity (the lookup is never echoed: it may be a redacted alias)."""

    default_code = "unknown_proposal"


class DuplicateIdentity(InputError):
    """Two packets share a packet or file identity across pending and resolved."""

    default_code = "duplicate_identity"


@dataclass(frozen=True)
class Entry:
    """One packet file. ``packet`` is the parsed packet (the receipt stand-in when ``redacted``), or ``None``
    with ``problem`` set when a repo-safe file does not parse or holds a credential (``problem.code`` is then
    ``prohibited_content_detected``). ``rel`` is the repository-relative path."""

    state: str
    path: Path
    rel: str
    pre: Preflight
    packet: Packet | None
    problem: InputError | None
    tokens: frozenset[str]

    @property
    def redacted(self) -> bool:
        """Whether the file is not repo-safe and is shown only as its redacted receipt."""
        return not self.pre.repo_safe

    @property
    def shown_path(self) -> str | None:
        """The path people may see: ``None`` for a redacted file (its name is part of its identity)."""
        return None if self.redacted else self.rel

    @property
    def shown_id(self) -> str | None:
        """The id people may see: the packet id, the receipt id when redacted, the raw id of a broken file."""
        return self.packet.id if self.packet is not None else self.pre.raw_id

    @property
    def shown_file_id(self) -> str:
        """The file id people may see (the receipt's when redacted)."""
        return self.packet.file_id if self.packet is not None else self.pre.file_id


@dataclass(frozen=True)
class Inventory:
    """Every packet file under pending/ and resolved/, identities checked unique."""

    entries: tuple[Entry, ...]

    def pending(self) -> tuple[Entry, ...]:
        """The pending inbox, in file order."""
        return tuple(e for e in self.entries if e.state == "pending")

    def find(self, identity: str) -> Entry:
        """The packet whose id, file id or redacted alias is ``identity`` (compared by identity token).

        Raises:
            ProposalNotFound: no packet matches.
        """
        token = identity_token(identity.strip())
        for entry in self.entries:
            if token in entry.tokens:
                return entry
        raise ProposalNotFound(NOT_FOUND)

    def taken(self) -> frozenset[str]:
        """Every identity token in use."""
        return frozenset(t for e in self.entries for t in e.tokens)


@dataclass(frozen=True)
class Issue:
    """One reason a pending packet cannot be applied: stable ``code``, the ``field``, a content-free message."""

    code: str
    field: str
    message: str


@dataclass(frozen=True)
class ApplyResult:
    """What ``apply`` did: the packet, the record written (or tombstoned) and the files touched.

    ``record_id`` is the new record for create/supersede and the tombstoned record for tombstone; ``target_id``
    the superseded or tombstoned record (``None`` for create). ``replayed`` is true when the packet was already
    applied and nothing was written; ``drift`` then lists what no longer matches. Paths are repository-relative.
    """

    proposal_id: str
    file_id: str
    action: str
    record_id: str
    target_id: str | None
    replayed: bool
    resolved_path: str
    written: tuple[str, ...] = ()
    drift: tuple[str, ...] = ()


@dataclass(frozen=True)
class RejectResult:
    """What ``reject`` did. Ids are the receipt's when ``redacted`` (``written`` then omits the original file's
    path, which is part of its identity); ``replayed`` means it was already rejected and nothing changed."""

    proposal_id: str
    file_id: str
    redacted: bool
    replayed: bool
    reason: str
    resolved_path: str
    written: tuple[str, ...] = ()
