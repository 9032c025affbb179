"""The one exception type for problems a user can fix.

Its message is a complete paragraph: what is wrong and what to do about it.
The CLI prints it as is (no traceback) and exits with status 2, or 3 when the
environment (the engine, the images, the disk), not the input, is at fault
(vnetbench/terminal/exitstatus.py has the whole contract).
"""


class UserError(Exception):
    """A problem with the user's input or machine, explained in one paragraph."""

    exit_code = 2


class Interrupted(KeyboardInterrupt):
    """SIGTERM, SIGHUP or SIGQUIT turned into the same path as Ctrl-C, so teardown runs."""


class EnvironmentProblem(UserError):
    """The engine or the machine, not the input, stands in the way (the engine does not
    answer, an image is missing or cannot be built, the disk is full): exit 3."""

    exit_code = 3


class OverlayUnavailable(EnvironmentProblem):
    """The overlay cannot run on this machine (e.g. its images are absent)."""


class BlockTaken(UserError):
    """The engine refused the run's address block: another network overlaps it (made
    after the block was chosen). The run claims another block and tries again."""

    def __init__(self, block: object, engine_said: str) -> None:
        self.block = block
        super().__init__(
            f"The engine refused the address block {block}: another network took part of "
            f"it after vnetbench chose it ({engine_said}). Run again; vnetbench picks a "
            "free block.")
