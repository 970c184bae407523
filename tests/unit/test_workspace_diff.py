from durabench.attempt.workspace_diff import diff_snapshots


def test_diff_reports_changed_added_removed_files() -> None:
    before = {"a.py": b"x = 1\n", "gone.py": b"old\n", "same.py": b"s\n"}
    after = {"a.py": b"x = 2\n", "new.py": b"fresh\n", "same.py": b"s\n"}
    diff = diff_snapshots(before, after)
    assert diff.files_changed == ("a.py", "gone.py", "new.py")
    assert "-x = 1\n+x = 2\n" in diff.patch
    assert "--- /dev/null\n+++ b/new.py" in diff.patch
    assert "--- a/gone.py\n+++ /dev/null" in diff.patch


def test_diff_ignores_pycache_and_git_and_marks_binary() -> None:
    before = {"pkg/__pycache__/m.pyc": b"\0a", ".git/index": b"1", "img.bin": b"\0\1"}
    after = {"pkg/__pycache__/m.pyc": b"\0b", ".git/index": b"2", "img.bin": b"\0\2"}
    diff = diff_snapshots(before, after)
    assert diff.files_changed == ("img.bin",)
    assert diff.patch == "Binary files a/img.bin and b/img.bin differ\n"


def test_no_change_no_patch() -> None:
    assert diff_snapshots({"a": b"1"}, {"a": b"1"}).patch == ""


def test_the_patch_stops_growing_and_says_so() -> None:
    from durabench.attempt.workspace_diff import diff_snapshots

    after = {f"f{i}.txt": b"a\n" * 5000 for i in range(50)}
    diff = diff_snapshots({}, after, max_chars=20_000)
    assert len(diff.files_changed) == 50
    assert len(diff.patch) < 40_000
    assert diff.patch.endswith("the patch stops at 20,000 characters; 50 files changed\n")


def test_a_file_name_with_escapes_or_newlines_is_quoted_as_git_does() -> None:
    """A name the agent chose cannot clear a terminal or forge a line of the patch."""
    name = "evil\x1b[2J\n+++ b/forged.py.py"
    diff = diff_snapshots({}, {name: b"x\n", "plain.py": b"y\n"})
    assert "\x1b" not in diff.patch
    assert '+++ "b/evil\\033[2J\\n+++ b/forged.py.py"\n' in diff.patch
    assert "\n+++ b/forged.py.py" not in diff.patch
    assert "+++ b/plain.py\n" in diff.patch  # an ordinary name stays as it is
    binary = diff_snapshots({}, {"a\tb": b"\0"}).patch
    assert binary == 'Binary files "a/a\\tb" and "b/a\\tb" differ\n'
