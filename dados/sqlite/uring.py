"""fdatasync without waiting for it: one io_uring per connection, through ctypes (Linux).

A commit's fdatasync, submitted as the commit returns, runs in the kernel's worker while
the request builds its answer; the request then only collects its result, which by then
is usually there (bench/RESULTS.md). It is the same call as os.fdatasync (the kernel's
vfs_fsync_range with datasync), so a write is acknowledged on the same terms.

Where io_uring is missing or refused (kernels before 5.1, io_uring_disabled, container
seccomp profiles), FsyncRing.open() answers None and the caller syncs as before.
"""

import ctypes
import errno
import mmap
import os
import struct

_SETUP, _ENTER = 425, 426  # the same number on every Linux architecture
_ENTER_GETEVENTS = 1
_OP_FSYNC, _FSYNC_DATASYNC = 3, 1
_OFF_SQ_RING, _OFF_CQ_RING, _OFF_SQES = 0, 0x8000000, 0x10000000
# struct io_uring_sqe: opcode, flags, ioprio, fd, off, addr, len, fsync_flags, user_data
_SQE = struct.Struct("=BBHiQQIIQ24x")
_CQE = struct.Struct("=QiI")  # user_data, res, flags
_U32 = struct.Struct("=I")
ENTRIES = 8


def _syscall():
    """libc's syscall(), every argument passed as a long: it is variadic, and ctypes
    would pass a plain int as 32 bits, which not every architecture widens."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function = libc.syscall
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_long
    return lambda *args: function(*(ctypes.c_long(a) for a in args))


_syscall_function = _syscall()


class FsyncRing:
    """Up to ENTRIES fdatasyncs in flight; collect() waits for all of them."""

    @classmethod
    def open(cls):
        """A ring, or None where the kernel does not give one."""
        if _syscall_function is None:
            return None
        params = ctypes.create_string_buffer(120)  # struct io_uring_params
        fd = _syscall_function(_SETUP, ENTRIES, ctypes.addressof(params))
        if fd < 0:
            return None
        try:
            return cls(fd, params.raw)
        except (OSError, ValueError):
            os.close(fd)
            return None

    def __init__(self, fd, params: bytes):
        sq_entries, cq_entries = struct.unpack_from("=II", params, 0)
        # struct io_sqring_offsets and io_cqring_offsets
        self._sq_head, self._sq_tail, self._sq_mask, _, _, _, self._sq_array = struct.unpack_from(
            "=7I", params, 40
        )
        self._cq_head, self._cq_tail, self._cq_mask, _, _, self._cqes = struct.unpack_from(
            "=6I", params, 80
        )
        self._fd = fd
        self._sq = mmap.mmap(fd, self._sq_array + sq_entries * 4, offset=_OFF_SQ_RING)
        self._cq = mmap.mmap(fd, self._cqes + cq_entries * _CQE.size, offset=_OFF_CQ_RING)
        self._sqes = mmap.mmap(fd, sq_entries * _SQE.size, offset=_OFF_SQES)
        self._sq_mask = _U32.unpack_from(self._sq, self._sq_mask)[0]
        self._cq_mask = _U32.unpack_from(self._cq, self._cq_mask)[0]
        self.in_flight = 0

    def submit(self, fd) -> bool:
        """Start fdatasync(fd); False if it could not be (the caller syncs itself)."""
        if self.in_flight >= ENTRIES:
            return False
        tail = _U32.unpack_from(self._sq, self._sq_tail)[0]
        index = tail & self._sq_mask
        entry = (_OP_FSYNC, 0, 0, fd, 0, 0, 0, _FSYNC_DATASYNC, 0)
        _SQE.pack_into(self._sqes, index * _SQE.size, *entry)
        _U32.pack_into(self._sq, self._sq_array + index * 4, index)
        _U32.pack_into(self._sq, self._sq_tail, (tail + 1) & 0xFFFFFFFF)
        while True:
            submitted = _syscall_function(_ENTER, self._fd, 1, 0, 0, 0, 0)
            if submitted == 1:
                self.in_flight += 1
                return True
            if submitted < 0 and ctypes.get_errno() == errno.EINTR:
                continue
            # Not taken (the kernel refused the entry): take it back off the queue.
            _U32.pack_into(self._sq, self._sq_tail, tail)
            return False

    def collect(self) -> None:
        """Wait for every fdatasync in flight; OSError for the first that failed."""
        failure = None
        while self.in_flight:
            head = _U32.unpack_from(self._cq, self._cq_head)[0]
            if head == _U32.unpack_from(self._cq, self._cq_tail)[0]:
                done = _syscall_function(_ENTER, self._fd, 0, 1, _ENTER_GETEVENTS, 0, 0)
                if done < 0:
                    code = ctypes.get_errno()
                    if code != errno.EINTR:
                        self.in_flight = 0  # the ring is unusable: close() follows
                        raise OSError(code, f"io_uring_enter: {errno.errorcode.get(code, code)}")
                continue
            slot = self._cqes + (head & self._cq_mask) * _CQE.size
            _, result, _ = _CQE.unpack_from(self._cq, slot)
            _U32.pack_into(self._cq, self._cq_head, (head + 1) & 0xFFFFFFFF)
            self.in_flight -= 1
            if result < 0 and failure is None:
                failure = OSError(-result, f"fdatasync: {errno.errorcode.get(-result, -result)}")
        if failure is not None:
            raise failure

    def close(self) -> None:
        for area in (self._sq, self._cq, self._sqes):
            area.close()
        os.close(self._fd)
