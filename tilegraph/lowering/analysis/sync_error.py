"""The error both synchronisation checkers raise: the pipe-queue checker
(:mod:`.sync_check`) and the cross-block one (:mod:`.barrier_check`)."""


class SyncError(AssertionError):
    """The synchronisation of a kernel is insufficient (the message says where)."""
