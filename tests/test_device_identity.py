"""Which box and device measured what: reports, exports and the worker's ready message say so,
and the validated reader keeps every such field bounded."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from pathlib import Path

import pytest

from probes.link import protocol
from probes.link.protocol import MAX_NAME_CHARS, DeviceIdentity, ProfileReport, ProtocolError, WorkerReady
from tui.export import chrome_trace, report, to_csv

RECORDED = Path(__file__).parent / "data" / "h200_add.json"


def recorded() -> ProfileReport:
    return ProfileReport.from_json(RECORDED.read_text())


def test_a_report_names_the_box_device_torch_and_driver_and_reads_back() -> None:
    rep = recorded()
    rep.devices = [DeviceIdentity("gpu2", "cuda:1", "NVIDIA H200", "2.6.0+cu124", "550.54.15")]
    rep.results = [dataclasses.replace(m, host="gpu2") for m in rep.results]
    back = ProfileReport.from_json(rep.to_json())
    assert back.devices == rep.devices
    assert {m.measured_on for m in back.results} == {"gpu2:" + rep.results[0].device}


def test_a_report_written_before_device_identities_still_reads() -> None:
    assert recorded().devices == [] and all(m.host is None for m in recorded().results)


@pytest.mark.parametrize(
    ("change", "refusal"),
    [
        ({"host": "gpu 2; rm -rf"}, "not a host name"),
        ({"device": "tpu"}, "unknown device"),
        ({"label": "x" * (MAX_NAME_CHARS + 1)}, f"the most is {MAX_NAME_CHARS}"),
        ({"driver": "9" * 10_000}, f"the most is {MAX_NAME_CHARS}"),
    ],
)
def test_a_hostile_device_identity_is_refused_in_one_line(change: dict[str, str], refusal: str) -> None:
    data = json.loads(recorded().to_json())
    data["devices"] = [{"host": None, "device": "cuda:0", "label": "H200", "torch": "2.6", "driver": None} | change]
    with pytest.raises(ProtocolError, match=refusal) as refused:
        ProfileReport.from_json(json.dumps(data))
    assert "\n" not in str(refused.value)


def test_a_report_of_more_devices_than_a_command_measures_is_refused() -> None:
    data = json.loads(recorded().to_json())
    data["devices"] = [{"host": None, "device": "cpu", "label": "CPU", "torch": "2.6"}] * 9
    with pytest.raises(ProtocolError, match="9 devices"):
        ProfileReport.from_json(json.dumps(data))


def test_a_measurement_from_a_hostile_host_name_is_refused() -> None:
    data = json.loads(recorded().to_json())
    data["results"][0]["host"] = "\x1b[2Jbox"
    with pytest.raises(ProtocolError, match="not a host name"):
        ProfileReport.from_json(json.dumps(data))


def test_the_worker_states_a_cuda_devices_driver_and_a_too_long_one_is_refused() -> None:
    ready = WorkerReady(1, "2.6.0", [], "cuda:0")
    line = json.loads(protocol.encode(ready))
    line["devices"] = [{"name": "cuda:0", "label": "H200", "total_memory": 1, "free_memory": 1, "driver": "550.54.15"}]
    decoded = protocol.decode(json.dumps(line))
    assert isinstance(decoded, WorkerReady) and decoded.devices[0].driver == "550.54.15"
    line["devices"][0]["driver"] = "5" * (MAX_NAME_CHARS + 1)
    with pytest.raises(ProtocolError, match="devices"):
        protocol.decode(json.dumps(line))


def test_the_apps_exports_say_which_box_and_device_measured_each_row() -> None:
    local, remote = recorded().results[0], dataclasses.replace(recorded().results[0], host="gpu2", mode="compiled")
    rows = list(csv.DictReader(io.StringIO(to_csv([local, remote]))))
    assert {(row["mode"], row["host"], row["device"]) for row in rows} == {
        ("eager", "", local.device),
        ("compiled", "gpu2", local.device),
    }
    trace = chrome_trace([local, remote])
    labels = [e["args"]["labels"] for e in trace["traceEvents"] if e["name"] == "process_labels"]  # type: ignore[index]
    assert labels == [local.device, f"gpu2:{local.device}"]
    assert trace["otherData"]["devices"] == [  # type: ignore[index]
        {"host": None, "device": local.device},
        {"host": "gpu2", "device": local.device},
    ]
    exported = report([remote], device="cuda:0", device_label="NVIDIA H200", torch_version="2.6", host="gpu2")
    assert protocol.to_dict(ProfileReport.from_json(exported.to_json()).devices) == [
        {"host": "gpu2", "device": "cuda:0", "label": "NVIDIA H200", "torch": "2.6", "driver": None}
    ]


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n", "550.54.15"),
        ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build\n", "570.86.15"),
        ("something else\n", None),
    ],
)
def test_the_nvidia_driver_version_is_read_from_its_kernel_module(tmp_path: Path, text: str, version: str) -> None:
    from probes.engine.devices import nvidia_driver_version

    (tmp_path / "version").write_text(text)
    assert nvidia_driver_version(tmp_path / "version") == version
    assert nvidia_driver_version(tmp_path / "absent") is None
