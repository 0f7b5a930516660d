"""`trainvisor render` against each platform's own rules, applied as the platform's source or
documentation defines them (each rule below cites where it is from): the specs are rendered by the
real binary from the examples (or from descriptions written here), then judged by the rule.
"""
import json
import re
import subprocess
import sys

import pytest

import tvtest

BIN = str(tvtest.BIN)
SRC = tvtest.SOURCE_DIR
EXAMPLES = SRC / "examples" / "render"


def render(config, target, *extra, check=True):
    p = subprocess.run([BIN, "render", "--config", str(config), "--target", target, *extra],
                       capture_output=True, text=True, timeout=60)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def write_config(tmp_path, doc, name="job.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def minimal(**fields):
    doc = json.loads((EXAMPLES / "minimal.json").read_text())
    doc.update(fields)
    return doc


# --- Kubeflow: runPolicy.backoffLimit ---------------------------------------------------------

def operator_past_backoff_limit(backoff_limit, pods):
    """PastBackoffLimit, kubeflow/training-operator pkg/core/job.go (v1.7.0 .. v1.9.0; kubeflow/common
    pkg/controller.v1/common/job.go pastBackoffLimit before it): the containers' restartCount summed
    over every pod in phase Running, of every replica type whose restartPolicy is OnFailure,
    Always (or ExitCode); a limit of 0 fails at the first restart, else `result >= BackoffLimit`."""
    if backoff_limit is None:
        return False
    total = sum(p["restarts"] for p in pods if p["phase"] == "Running")
    return total > 0 if backoff_limit == 0 else total >= backoff_limit


def whole_job_retries_survived(backoff_limit, nodes, lost_node):
    """How many whole-job retries a job of `nodes` pods gets before the operator fails it. Each
    retry: trainvisor ends every node together (the others exit 75 when one is lost), the kubelet
    restarts each container in place (restartCount + 1); a lost node's pod is recreated elsewhere
    instead (a new pod, restartCount 0)."""
    pods = [{"phase": "Running", "restarts": 0} for _ in range(nodes)]
    for retry in range(1, 1000):
        for i, p in enumerate(pods):
            if lost_node and i == nodes - 1:
                pods[i] = {"phase": "Running", "restarts": 0}
            else:
                p["restarts"] += 1
        if operator_past_backoff_limit(backoff_limit, pods):
            return retry - 1
    return None


def test_the_model_shows_the_old_limit_failing_multi_node_jobs():
    """backoffLimit = max_retry (3), what render wrote before: a 4-node job fails at its first
    whole-job retry, a 2-node job at its second; one node gets 2 of its 3."""
    assert whole_job_retries_survived(3, 4, lost_node=False) == 0
    assert whole_job_retries_survived(3, 2, lost_node=False) == 1
    assert whole_job_retries_survived(3, 1, lost_node=False) == 2


@pytest.mark.parametrize("nodes", [1, 2, 4, 16])
@pytest.mark.parametrize("max_retry", [0, 1, 3])
def test_kubeflow_backoff_limit_gives_max_retry_whole_job_retries(tmp_path, nodes, max_retry):
    doc = minimal(nodes=nodes, kubeflow={"max_retry": max_retry})
    job = json.loads(render(write_config(tmp_path, doc), "kubeflow").stdout)
    limit = job["spec"]["runPolicy"]["backoffLimit"]
    annotations = job["metadata"]["annotations"]
    assert annotations["sagemaker.amazonaws.com/job-max-retry-count"] == str(max_retry)
    for lost_node in (False, True):
        survived = whole_job_retries_survived(limit, nodes, lost_node)
        if lost_node and nodes == 1:
            assert survived is None  # a new pod each time: the operator counts nothing
        elif lost_node:
            assert survived >= max_retry  # the lost node's new pod starts at 0
        else:
            assert survived == max_retry, (limit, nodes)


def test_cosmos_example_survives_its_max_retry_under_the_operators_count():
    job = json.loads(render(EXAMPLES / "cosmos3-hyperpod.json", "kubeflow").stdout)
    nodes = sum(s["replicas"] for s in job["spec"]["pytorchReplicaSpecs"].values())
    retries = int(job["metadata"]["annotations"]["sagemaker.amazonaws.com/job-max-retry-count"])
    assert nodes == 2 and retries == 3
    assert whole_job_retries_survived(job["spec"]["runPolicy"]["backoffLimit"], nodes, False) == 3


# --- Each API's documented limits (render/platform_limits.cc) ---------------------------------

def botocore_input(service, operation):
    import botocore.session
    model = botocore.session.get_session().get_service_model(service)
    return model.operation_model(operation).input_shape


def documented_number(doc, before, after):
    """The number a botocore documentation sentence states: `before` N `after`."""
    m = re.search(re.escape(before) + r"\s*(\d+)\s*" + re.escape(after), doc)
    assert m, doc
    return int(m.group(1))


# What render wrote before: six entries, one more than RegisterJobDefinition takes.
OLD_BATCH_RULES = [{"onExitCode": "75", "action": "RETRY"}, {"onExitCode": "74", "action": "RETRY"},
                   {"onStatusReason": "Host EC2*", "action": "RETRY"},
                   {"onExitCode": "78", "action": "EXIT"}, {"onExitCode": "69", "action": "EXIT"},
                   {"onReason": "*", "action": "EXIT"}]


def test_batch_retry_rules_fit_the_api_and_decide_as_before():
    """RetryStrategy.evaluateOnExit: "Array of up to 5 objects" (AWS Batch API reference,
    RetryStrategy; botocore's batch model has it in the member's documentation, no "max"). The
    rules decide every exit code, status reason and reason as the six did (Batch's matching:
    batch_evaluate_on_exit, tests/integration/test_platform_contracts.py)."""
    from test_platform_contracts import batch_evaluate_on_exit
    strategy = botocore_input("batch", "RegisterJobDefinition").members["retryStrategy"]
    limit = documented_number(strategy.members["evaluateOnExit"].documentation, "Array of up to", "objects")
    assert limit == 5
    definition = json.loads(render(EXAMPLES / "isaac-lab-batch-mnp.json", "batch").stdout)
    rules = definition["retryStrategy"]["evaluateOnExit"]
    assert len(rules) <= limit and len(OLD_BATCH_RULES) > limit
    for code in range(256):
        for status in ("Essential container in task exited", "Host EC2 (instance i-0abc) terminated."):
            for reason in ("", "CannotInspectContainerError", "OutOfMemoryError: Container killed"):
                assert batch_evaluate_on_exit(rules, code, status, reason) == \
                    batch_evaluate_on_exit(OLD_BATCH_RULES, code, status, reason), (code, status, reason)
    assert batch_evaluate_on_exit(rules, 75, "Essential container in task exited", "") == "RETRY"
    assert batch_evaluate_on_exit(rules, 78, "Essential container in task exited", "") == "EXIT"


def test_sagemaker_job_name_matches_the_models_pattern_and_length(tmp_path):
    """CreateTrainingJob TrainingJobName: botocore's sagemaker model has max 63 and the pattern
    (its validator checks neither): a 63-character name with render's date suffix still fits."""
    shape = botocore_input("sagemaker", "CreateTrainingJob").members["TrainingJobName"]
    assert shape.metadata["max"] == 63
    doc = json.loads((EXAMPLES / "isaac-lab-hyperpod-sagemaker.json").read_text())
    doc["name"] = "a" * 62 + "b"
    req = json.loads(render(write_config(tmp_path, doc), "sagemaker").stdout)
    name = req["TrainingJobName"]
    assert re.fullmatch(shape.metadata["pattern"], name) and len(name) <= shape.metadata["max"], name
    assert name.startswith("a" * 40) and name != doc["name"]


def test_batch_definition_name_is_checked_against_the_documented_rule(tmp_path):
    """RegisterJobDefinition jobDefinitionName: "up to 128 letters long ... letters, numbers,
    hyphens (-), and underscores (_)" (botocore's batch model, the member's documentation)."""
    doc_text = botocore_input("batch", "RegisterJobDefinition").members["jobDefinitionName"].documentation
    assert documented_number(doc_text, "up to", "letters long") == 128
    definition = json.loads(render(EXAMPLES / "isaac-lab-batch-mnp.json", "batch").stdout)
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,128}", definition["jobDefinitionName"])


def test_kubeflow_names_follow_the_operators_webhook_and_its_service_names(tmp_path):
    """The operator's webhook takes a PyTorchJob name that is an RFC 1035 label (starts with a
    letter: validatePyTorchJob, NameIsDNS1035Label, pkg/webhooks/pytorch/pytorchjob_webhook.go);
    each replica's Service and pod is <name>-<type>-<index>, an RFC 1035 label of at most 63."""
    p = render(write_config(tmp_path, minimal(name="1ppo")), "kubeflow", check=False)
    assert p.returncode == 78 and "name: \"1ppo\"" in p.stderr and "RFC 1035" in p.stderr, p.stderr
    assert render(write_config(tmp_path, minimal(name="1ppo")), "slurm").returncode == 0
    long_name = "a" * 53  # + "-worker-99" (101 nodes) = 63: fits; + "-worker-100" (102): 64
    assert render(write_config(tmp_path, minimal(name=long_name, nodes=101)), "kubeflow").returncode == 0
    p = render(write_config(tmp_path, minimal(name=long_name, nodes=102)), "kubeflow", check=False)
    assert p.returncode == 78 and long_name + "-worker-100" in p.stderr, p.stderr


# --- render --name-suffix ---------------------------------------------------------------------

def test_name_suffix_is_an_option_of_render():
    """A second CreateTrainingJob with a name in use fails (CreateTrainingJob: "The name must be
    unique within an Amazon Web Services Region in an Amazon Web Services account"): render appends
    the time by default, --name-suffix S for a name of one's own, none for the name as it is."""
    example = EXAMPLES / "isaac-lab-hyperpod-sagemaker.json"
    named = lambda *extra: json.loads(render(example, "sagemaker", *extra).stdout)["TrainingJobName"]
    assert re.fullmatch(r"isaaclab-h1-\d{8}-\d{6}", named())
    assert named("--name-suffix", "run-7") == "isaaclab-h1-run-7"
    assert named("--name-suffix=none") == "isaaclab-h1"
    p = render(example, "sagemaker", "--name-suffix", "a b", check=False)
    assert p.returncode == 78 and "--name-suffix" in p.stderr, p.stderr
    p = render(example, "kubeflow", "--name-suffix", "run-7")
    assert "--name-suffix is not used by kubeflow" in p.stderr
    assert "--name-suffix" in subprocess.run([BIN, "render", "--help"], capture_output=True,
                                             text=True, timeout=60).stdout


# --- timeout_s, per target ----------------------------------------------------------------------

def test_timeout_says_what_it_becomes_on_each_target():
    """The Isaac Lab example's 7200 s (the seed's MaxRuntimeInSeconds): Kubeflow's
    activeDeadlineSeconds counts from the job's start across restarts (PastActiveDeadline,
    pkg/core/job.go); SageMaker's MaxRuntimeInSeconds covers every attempt when RetryStrategy is
    set (CreateTrainingJob in botocore's model); Batch's attemptDurationSeconds is per attempt."""
    import botocore.session
    sm = botocore.session.get_session().get_service_model("sagemaker").operation_model("CreateTrainingJob")
    runtime = sm.input_shape.members["StoppingCondition"].members["MaxRuntimeInSeconds"].documentation
    assert "all of the attempts in total" in runtime
    example = EXAMPLES / "isaac-lab-hyperpod-sagemaker.json"
    job = render(example, "kubeflow")
    assert json.loads(job.stdout)["spec"]["runPolicy"]["activeDeadlineSeconds"] == 7200
    assert "timeout_s 7200 s becomes runPolicy.activeDeadlineSeconds: a limit on the whole job" in job.stderr
    req = render(example, "sagemaker")
    assert json.loads(req.stdout)["RetryStrategy"] and "MaxRuntimeInSeconds: a limit on all the attempts" in req.stderr
    batch = render(EXAMPLES / "isaac-lab-batch-mnp.json", "batch")
    assert "attemptDurationSeconds: a limit on each attempt" in batch.stderr


# --- HyperPod job auto-resume's namespaces ------------------------------------------------------

def test_auto_resume_outside_its_namespaces_is_warned(tmp_path):
    """"The job must be running under the kubeflow namespace or a namespace prefixed with
    hyperpod" (AWS, SageMaker HyperPod: Running jobs using the SageMaker HyperPod CLI, job
    auto-resume): the Cosmos example (auto_resume, namespace hyperpod-cosmos3) renders without a
    word; the same job in the namespace cosmos3 is warned, and not without auto-resume."""
    warning = "HyperPod resumes jobs only in the namespace kubeflow or one whose name starts with hyperpod"
    example = EXAMPLES / "cosmos3-hyperpod.json"
    assert warning not in render(example, "kubeflow").stderr
    doc = json.loads(example.read_text())
    doc["kubeflow"]["namespace"] = "cosmos3"
    p = render(write_config(tmp_path, doc), "kubeflow")
    assert warning in p.stderr and 'auto_resume in namespace "cosmos3"' in p.stderr, p.stderr
    doc["kubeflow"]["auto_resume"] = False
    assert warning not in render(write_config(tmp_path, doc), "kubeflow").stderr


# --- Batch: the definition's name ---------------------------------------------------------------

def test_batch_definition_keeps_the_seeds_name_and_case():
    """The seed's register-job-definition.json names its definition IsaacLabJobDefinition; Batch
    takes upper case (RegisterJobDefinition jobDefinitionName), so the example keeps it."""
    definition = json.loads(render(EXAMPLES / "isaac-lab-batch-mnp.json", "batch").stdout)
    assert definition["jobDefinitionName"] == "IsaacLabJobDefinition"


# --- SageMaker MetricDefinitions against trainvisor's real output -----------------------------

# The worker: rsl_rl's iteration banner (what --progress-regex auto reads) for steps 0..3, then it
# waits for the test's release file.
PROGRESS_SCRIPT = """
import os, sys, time
for it in range(4):
    print("#" * 80 + "\\n" + f" Learning iteration {it}/30 ".center(80) + "\\n", flush=True)
deadline = time.time() + 120
while not os.path.exists(sys.argv[1]) and time.time() < deadline:
    time.sleep(0.05)
"""


def sagemaker_metrics(definitions, lines):
    """As SageMaker applies MetricDefinitions (CreateTrainingJob, AlgorithmSpecification: "a list
    of metric definition objects ... a regular expression", the Developer Guide's "Define metrics":
    the first group of a match in a log line is the value): {name: [(line, value), ...]}."""
    found = {d["Name"]: [] for d in definitions}
    for line in lines:
        for d in definitions:
            m = re.search(d["Regex"], line)
            if m:
                found[d["Name"]].append((line, float(m.group(1))))
    return found


def rendered_metric_definitions():
    req = json.loads(render(EXAMPLES / "isaac-lab-hyperpod-sagemaker.json", "sagemaker").stdout)
    args = req["AlgorithmSpecification"]["ContainerArguments"]
    assert args[args.index("--metrics-log-interval") + 1] == "60"
    return req["AlgorithmSpecification"]["MetricDefinitions"], args


def run_with_record(tmp_path, *extra, release=True):
    """The real binary, one node, one worker: stderr lines as they come; the worker is released
    once a record with a step was logged (an event, not a time), or at once."""
    script = tmp_path / "train.py"
    script.write_text(PROGRESS_SCRIPT)
    release_file = tmp_path / "release"
    if not release:
        release_file.touch()
    proc = subprocess.Popen([BIN, "run", "--preflight", "none", "--nproc-per-node", "1",
                             "--failure-file", str(tmp_path / "failure"),
                             "--termination-log", str(tmp_path / "termlog"), *extra,
                             "--no-python", sys.executable, str(script), str(release_file)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    lines = []
    for line in proc.stderr:
        lines.append(line.rstrip("\n"))
        if release and "trainvisor metrics: " in line and " step=3" in line:
            release_file.touch()
    assert proc.wait(timeout=120) == 0, "\n".join(lines[-30:])
    return lines


def test_metric_definitions_read_trainvisors_record_while_it_trains(tmp_path):
    definitions, _ = rendered_metric_definitions()
    lines = run_with_record(tmp_path, "--progress-regex", "auto", "--metrics-log-interval", "0.2")
    found = sagemaker_metrics(definitions, lines)
    records = [line for line in lines if "trainvisor metrics: " in line]
    assert len(records) >= 2, "a record while training and one at the end"
    steps = [v for _, v in found["trainvisor:last_step"]]
    assert steps and steps[-1] == 3
    assert found["trainvisor:goodput"] and all(0 <= v <= 1 for _, v in found["trainvisor:goodput"])
    assert [v for _, v in found["trainvisor:restarts"]][-1] == 0
    assert [v for _, v in found["trainvisor:goodput_upper_bound"]][-1] == 0
    for name, hits in found.items():  # only the record: never a line of the summary table
        assert all("trainvisor metrics: " in line for line, _ in hits), (name, hits)
    assert any("goodput summary" in line for line in lines)


def test_an_upper_bound_goodput_is_read_too(tmp_path):
    """Without a progress signal the summary writes `goodput <= 0.997`, which the regex render
    wrote before (`goodput +([0-9.]+)`) never matched; the record's goodput is matched, and says it
    is an upper bound."""
    definitions, _ = rendered_metric_definitions()
    lines = run_with_record(tmp_path, "--metrics-log-interval", "60", release=False)
    summary_line = [line for line in lines if re.search(r"^\s+goodput\s+<=", line)]
    assert summary_line and not re.search(r"goodput +([0-9.]+)", summary_line[0])
    found = sagemaker_metrics(definitions, lines)
    assert len(found["trainvisor:goodput"]) == 1  # the end-of-run record
    assert found["trainvisor:goodput_upper_bound"][0][1] == 1
