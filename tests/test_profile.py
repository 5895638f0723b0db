"""The workload profile: resolution, defaults as assumptions, and one-line errors for bad input."""

from __future__ import annotations

import pytest

from gpuplan.core.errors import InputError
from gpuplan.model.profile import load_profile_text

GOOD = """
[model]
preset = "llama-3.1-70b"
[training]
tokens = 2e12
[serving]
qps = 10
"""


def test_minimal_profile_lists_every_default(catalog):
    w = load_profile_text(GOOD, "good.toml", catalog)
    fields = {a.field for a in w.assumptions}
    assert {"training.sequence_length", "training.global_batch_tokens", "training.deadline_days",
            "serving.context_length", "serving.prompt_tokens", "serving.output_tokens", "serving.ttft_ms",
            "serving.tpot_ms", "serving.kv_precision", "constraints.pricing"} <= fields
    assert w.training.deadline_days == 90.0
    assert w.training.global_batch_tokens == 4 * 2**20  # 70B: 4M tokens, as Llama 2
    assert w.arch.total_params == pytest.approx(70.55e9, rel=0.01)


def test_params_only_derives_an_architecture_and_says_so(catalog):
    w = load_profile_text("[model]\nparams = 30e9\n[serving]\nqps = 1\n", "p.toml", catalog)
    assert w.arch.total_params == pytest.approx(30e9, rel=0.02)
    assert w.arch.heads % w.arch.kv_heads == 0
    assert any(a.field == "model.architecture" and "derived" in a.reason for a in w.assumptions)


def test_allowed_gpus_follow_constraints(catalog):
    text = GOOD + '[constraints]\nallow_vendors = ["amd"]\nexclude_gpus = ["mi300x"]\n'
    w = load_profile_text(text, "c.toml", catalog)
    assert w.constraints.allow_gpus and all(catalog.gpus[g].vendor == "amd" for g in w.constraints.allow_gpus)
    assert "mi300x-oam-192gb" not in w.constraints.allow_gpus


def _from_hf_config(tmp_path, catalog, config: str):
    """The workload of a profile whose model is ``config`` (a config.json's text)."""
    from gpuplan.model.profile import load_workload

    (tmp_path / "config.json").write_text(config)
    (tmp_path / "p.toml").write_text('[model]\nhf_config = "config.json"\n[serving]\nqps = 1\n')
    return load_workload(tmp_path / "p.toml", catalog)


def test_hf_config_reads_gqa_and_moe(tmp_path, catalog):
    w = _from_hf_config(tmp_path, catalog,
        '{"model_type": "mixtral", "num_hidden_layers": 56, "hidden_size": 6144, "num_attention_heads": 48,'
        ' "num_key_value_heads": 8, "intermediate_size": 16384, "vocab_size": 32768, "num_local_experts": 8,'
        ' "num_experts_per_tok": 2, "hidden_act": "silu", "tie_word_embeddings": false}')
    assert w.arch.experts == 8 and w.arch.active_experts == 2 and w.arch.kv_heads == 8
    assert w.arch.total_params == pytest.approx(140.6e9, rel=0.01)   # Mixtral-8x22B: 141B
    assert w.arch.active_params == pytest.approx(39.2e9, rel=0.02)   # 39B active


def test_hf_config_reads_mla_and_multi_token_prediction(tmp_path, catalog):
    """DeepSeek-V3's config.json (deepseek-ai/DeepSeek-V3): 671B main model plus one 14B MTP module
    (arXiv:2412.19437 section 2.2), which training counts: 1 module, not 0."""
    w = _from_hf_config(tmp_path, catalog,
        '{"model_type": "deepseek_v3", "num_hidden_layers": 61, "hidden_size": 7168, "num_attention_heads": 128,'
        ' "num_key_value_heads": 128, "intermediate_size": 18432, "moe_intermediate_size": 2048,'
        ' "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3,'
        ' "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,'
        ' "v_head_dim": 128, "vocab_size": 129280, "hidden_act": "silu", "tie_word_embeddings": false,'
        ' "num_nextn_predict_layers": 1, "max_position_embeddings": 163840}')
    assert w.arch.mtp_layers == 1 and w.arch.dense_layers == 3 and w.arch.kv_lora_rank == 512
    assert w.arch.total_params == pytest.approx(671e9, rel=0.01)
    assert w.arch.max_context_tokens == 163840   # the preset's value (catalog/models.toml)
    assert catalog.lookup("model", "deepseek-v3").max_context_tokens == 163840


BAD = [
    ("unknown-table", "[trainning]\ntokens = 1e12\n[model]\npreset = \"llama-2-7b\"\n", "trainning", "did you mean 'training'"),
    ("unknown-key", "[model]\npresett = \"llama-2-7b\"\n[serving]\nqps = 1\n", "model.presett", "did you mean 'preset'"),
    ("wrong-type", "[model]\npreset = \"llama-2-7b\"\n[serving]\nqps = \"fast\"\n", "serving.qps", "valid number"),
    ("boolean", "[model]\npreset = \"llama-2-7b\"\n[serving]\nqps = true\n", "serving.qps", "valid number (got true)"),
    ("negative", "[model]\npreset = \"llama-2-7b\"\n[serving]\nqps = -5\n", "serving.qps", "greater than 0"),
    ("zero-tokens", "[model]\npreset = \"llama-2-7b\"\n[training]\ntokens = 0\n", "training.tokens", "greater than or equal"),
    ("nan", "[model]\npreset = \"llama-2-7b\"\n[serving]\nqps = nan\n", "serving.qps", "finite"),
    ("inf", "[model]\npreset = \"llama-2-7b\"\n[training]\ntokens = inf\n", "training.tokens", "finite"),
    ("absurd-params", "[model]\nparams = 1e30\n[serving]\nqps = 1\n", "model.params", "less than or equal"),
    ("kv-heads", "[model]\nlayers = 4\nhidden = 512\nheads = 8\nkv_heads = 3\n[serving]\nqps = 1\n", "model", "must divide heads"),
    ("unknown-preset", "[model]\npreset = \"llama-2-7c\"\n[serving]\nqps = 1\n", "model.preset", "did you mean 'llama-2-7b'"),
    ("unknown-gpu", "[model]\npreset = \"llama-2-7b\"\n[serving]\nqps = 1\n[constraints]\nallow_gpus = [\"h1000\"]\n", "constraints.allow_gpus[0]", "unknown GPU 'h1000'"),
    ("toml-syntax", "[model\npreset = 1\n", "line 1", "TOML syntax error"),
    ("no-phase", "[model]\npreset = \"llama-2-7b\"\n", "p.toml", "needs a [training] or a [serving]"),
    ("two-models", "[model]\npreset = \"llama-2-7b\"\nparams = 7e9\n[serving]\nqps = 1\n", "model", "only one of"),
    ("too-long", "[model]\npreset = \"llama-2-7b\"\n[serving]\nqps = 1\nprompt_tokens = 4000\noutput_tokens = 200\ncontext_length = 4096\n", "serving", "exceeds context_length"),
    ("bad-precision", "[model]\npreset = \"llama-2-7b\"\n[serving]\nqps = 1\nprecision = \"fp7\"\n", "serving.precision", "'fp8'"),
    ("two-targets", "[model]\npreset = \"llama-2-7b\"\n[training]\ntokens = 1e12\ndeadline_days = 30\ngpus = 64\n", "training", "only one of"),
    ("short-seq", "[model]\npreset = \"llama-2-7b\"\n[training]\ntokens = 1e12\nsequence_length = 10\n", "training.sequence_length", "greater than or equal to 128"),
    ("string-number", "[model]\npreset = \"llama-2-7b\"\n[training]\ntokens = \"1e12\"\n", "training.tokens", "write tokens = 1e12 (a number, no quotes)"),
    ("float-count", "[model]\npreset = \"llama-2-7b\"\n[training]\ntokens = 1e12\ngpus = 2.5\n", "training.gpus", "valid integer"),
    ("negative-deadline", "[model]\npreset = \"llama-2-7b\"\n[training]\ntokens = 1e12\ndeadline_days = -3\n", "training.deadline_days", "greater than 0"),
    ("negative-spares", "[model]\npreset = \"llama-2-7b\"\n[serving]\nqps = 1\nspare_replicas = -1\n", "serving.spare_replicas", "greater than or equal to 0"),
    ("moe-no-active", "[model]\nlayers = 4\nhidden = 512\nheads = 8\nexperts = 8\n[serving]\nqps = 1\n", "model", "needs active_experts"),
    ("bad-vendor", "[model]\npreset = \"llama-2-7b\"\n[serving]\nqps = 1\n[constraints]\nallow_vendors = [\"acme\"]\n", "constraints.allow_vendors[0]", "'nvidia'"),
    ("batch-below-seq", "[model]\npreset = \"llama-2-7b\"\n[training]\ntokens = 1e12\nsequence_length = 8192\nglobal_batch_tokens = 4096\n", "training.global_batch_tokens", "smaller than one sequence"),
    ("empty-allow", "[model]\npreset = \"llama-2-7b\"\n[serving]\nqps = 1\n[constraints]\nallow_gpus = []\n", "constraints.allow_gpus", "empty"),
    ("huge-qps", "[model]\npreset = \"llama-2-7b\"\n[serving]\nqps = 1e9\n", "serving.qps", "less than or equal"),
    ("duplicate-key", "[model]\npreset = \"llama-2-7b\"\npreset = \"llama-2-13b\"\n[serving]\nqps = 1\n", "line 3", "TOML syntax error"),
    ("empty-file", "", "p.toml", "model"),
    ("one-token-context", "[model]\npreset = \"llama-2-7b\"\n[serving]\nqps = 1\ncontext_length = 1\n", "serving.context_length", "greater than or equal to 128"),
]


@pytest.mark.parametrize("name,text,field,expected", BAD, ids=[b[0] for b in BAD])
def test_bad_profile_is_one_line_exit_2(cli, tmp_path, name, text, field, expected):
    path = tmp_path / "p.toml"
    path.write_text(text)
    r = cli("recommend", str(path), "--format", "json")
    assert r.code == 2, r.err
    assert r.out == ""
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    assert "Traceback" not in r.err
    assert str(path) in lines[0]
    assert field in lines[0]
    assert expected in lines[0]


@pytest.mark.parametrize("make,expected", [
    (lambda p: None, "file not found"),
    (lambda p: p.mkdir(), "is a directory"),
    (lambda p: p.write_bytes(b"\xff\xfe[\x00m\x00"), "UTF-16"),
    (lambda p: p.write_bytes(b"[model]\npreset = \"\xe9\"\n"), "not valid UTF-8"),
    (lambda p: p.write_bytes(b"x" * 2_000_000), "larger than"),
], ids=["missing", "directory", "utf16", "latin1", "oversized"])
def test_unreadable_files(cli, tmp_path, make, expected):
    path = tmp_path / "p.toml"
    make(path)
    r = cli("recommend", str(path))
    assert r.code == 2
    assert len(r.err.strip().splitlines()) == 1 and expected in r.err and str(path) in r.err


def test_hf_config_errors_name_the_config(cli, tmp_path):
    (tmp_path / "p.toml").write_text('[model]\nhf_config = "missing.json"\n[serving]\nqps = 1\n')
    r = cli("recommend", str(tmp_path / "p.toml"))
    assert r.code == 2 and "missing.json: file not found" in r.err
    (tmp_path / "c.json").write_text('{"num_hidden_layers": 2, "num_hidden_layers": 3}')
    (tmp_path / "p.toml").write_text('[model]\nhf_config = "c.json"\n[serving]\nqps = 1\n')
    r = cli("recommend", str(tmp_path / "p.toml"))
    assert r.code == 2 and "duplicate key" in r.err and "c.json" in r.err


def test_byte_order_mark_is_accepted(tmp_path, catalog):
    from gpuplan.core.io import read_text

    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.encode())
    w = load_profile_text(read_text(path), str(path), catalog)
    assert w.model_name == "llama-3.1-70b"


def test_input_error_formats_file_field_message():
    e = InputError("must be > 0", file="a.toml", field="serving.qps")
    assert str(e) == "a.toml: serving.qps: must be > 0"


def test_field_lines_survive_a_comment_after_a_table_header():
    from gpuplan.model.profile import field_lines

    lines = field_lines('[model]  # which model\npreset = "x"\n\n[serving] # chat tier\nttft_ms = 1  # p99\n')
    assert lines == {"model": 1, "model.preset": 2, "serving": 4, "serving.ttft_ms": 5}
