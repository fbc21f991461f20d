"""Linux only: the seccomp filter of every worker, built here with libseccomp (pyseccomp), installed by the worker.

The filter refuses what a worker never needs: debugging or reading other processes, mounts and
namespaces, the kernel's keyring, BPF, performance counters, kernel modules, io_uring (whose
requests bypass seccomp), device nodes, and every socket (the worker talks through its pipes
alone). In the landlock tier, where the worker runs as the grader's own user, it also refuses
new processes (threads stay allowed), and, on a kernel whose Landlock cannot scope signals
(ABI < 6), every signal the worker would send beyond its own process group.

The grader exports the filter as BPF bytes (seccomp_export_bpf): the worker, which imports only the
standard library and numpy, loads them with prctl (grader.sandbox.worker.seccomp), or bubblewrap
does (--seccomp FD). A syscall from another architecture (x32, i386) ends the worker at once.
"""

import errno
import functools
import tempfile

REFUSED = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "mount_setattr",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "unshare",
    "setns",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "open_by_handle_at",
    "mknod",
    "mknodat",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "iopl",
    "ioperm",
    "quotactl",
    "socket",
    "socketpair",
)
SHARED_USER = (  # where the worker is the grader's own user: what Landlock leaves to the owner's rights, and new processes
    "fork",
    "vfork",
    "chmod",
    "fchmod",
    "fchmodat",
    "fchmodat2",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "truncate",
    "utime",
    "utimes",
    "utimensat",
    "futimesat",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "shmget",
    "shmat",
    "shmctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "semget",
    "semop",
    "semctl",
    "semtimedop",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
)
SELF_ONLY = {  # syscall: the arguments that must be 0 (this process), else refused where the worker is the grader's user
    "prlimit64": (0,),
    "setpriority": (0, 1),
    "sched_setaffinity": (0,),
    "sched_setscheduler": (0,),
    "sched_setparam": (0,),
    "sched_setattr": (0,),
}
IOPRIO_WHO_PROCESS = 1
SIGNALS = ("tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_send_signal")
CLONE_THREAD = 0x00010000
# fcntl commands that make the kernel signal another process
F_SETOWN, F_SETSIG, F_SETOWN_EX = (8, 10, 15)
FIOSETOWN, SIOCSPGRP = 0x8901, 0x8902  # their ioctl equivalents
MISSING_HINT = (
    "install libseccomp (apt-get install libseccomp2) and pyseccomp (pip install pyseccomp)"
)


def missing() -> str:
    """Why no filter can be built here, "" when it can."""
    try:
        import pyseccomp  # noqa: F401  (ctypes over libseccomp.so.2: RuntimeError where the library is absent)
    except (ImportError, RuntimeError, OSError) as error:
        return f"libseccomp cannot be used here ({error}): {MISSING_HINT}"
    return ""


@functools.cache
def program(shared_user: bool = False, scoped: bool = True) -> bytes:
    """The filter as BPF bytes. shared_user: the worker runs as the grader's own user (the landlock tier), so it may
    start no process and touch no one's metadata, IPC or scheduling; scoped False (with it): Landlock cannot scope
    signals on this kernel, so the filter refuses every signal beyond the worker's own process group.

    Raises OSError or RuntimeError where libseccomp is missing (see missing()).
    """
    import pyseccomp as s

    rules = s.SyscallFilter(s.ALLOW)
    # the default kills one thread, leaving the others running
    rules.set_attr(s.Attr.ACT_BADARCH, s.KILL_PROCESS)
    refuse = _refuser(rules, s.ERRNO(errno.EPERM))
    for name in REFUSED:
        refuse(name)
    if shared_user:
        _shared_user(rules, refuse, s)
    if shared_user and not scoped:
        for name in SIGNALS:
            refuse(name)
        # kill(0, sig): its own process group, which holds it alone
        refuse("kill", s.Arg(0, s.NE, 0))
        for command in (F_SETOWN, F_SETSIG, F_SETOWN_EX):
            refuse("fcntl", s.Arg(1, s.EQ, command))
        for request in (FIOSETOWN, SIOCSPGRP):
            refuse("ioctl", s.Arg(1, s.EQ, request))
    with tempfile.TemporaryFile() as file:
        rules.export_bpf(file)
        file.seek(0)
        return file.read()


def _refuser(rules, action):
    """refuse(name, *conditions): the syscall fails with the action's errno when every condition holds."""
    return lambda name, *conditions: rules.add_rule(action, name, *conditions)


def _shared_user(rules, refuse, s) -> None:
    """The rules of a worker that is the grader's own user: no new process (threads allowed), nothing of anyone else's."""
    for name in SHARED_USER:
        refuse(name)
    refuse("clone", s.Arg(0, s.MASKED_EQ, CLONE_THREAD, 0))
    # its flags sit behind a pointer: glibc then falls back to clone
    rules.add_rule(s.ERRNO(errno.ENOSYS), "clone3")
    for name, arguments in SELF_ONLY.items():
        for argument in arguments:
            refuse(name, s.Arg(argument, s.NE, 0))
    refuse("ioprio_set", s.Arg(0, s.NE, IOPRIO_WHO_PROCESS))
    refuse("ioprio_set", s.Arg(1, s.NE, 0))
