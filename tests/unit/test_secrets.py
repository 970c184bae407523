from pathlib import Path

from durabench.configs import all_configs
from durabench.secrets import REDACTED, scrub_text, scrub_tree, secret_values


def test_secret_values_are_the_token_variables_only() -> None:
    env = {"SOURCEGRAPH_ACCESS_TOKEN": "sgp_abcdef123", "SOURCEGRAPH_URL": "https://sg.example"}
    assert secret_values(all_configs(), env) == ("sgp_abcdef123",)
    assert secret_values(all_configs(), {"SOURCEGRAPH_ACCESS_TOKEN": "x"}) == ()


def test_scrub_text_and_tree(tmp_path: Path) -> None:
    assert scrub_text("token=sgp_abcdef123!", ["sgp_abcdef123"]) == f"token={REDACTED}!"
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "log.txt").write_bytes(b"x sgp_abcdef123 y")
    (tmp_path / "clean.txt").write_text("nothing here")
    assert scrub_tree(tmp_path, ["sgp_abcdef123"]) == 1
    assert (tmp_path / "a" / "log.txt").read_bytes() == f"x {REDACTED} y".encode()
    assert (tmp_path / "clean.txt").read_text() == "nothing here"
