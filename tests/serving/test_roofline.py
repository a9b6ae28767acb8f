"""The open models' sizes and the roofline of prefill and decode, on figures worked by hand."""
import pytest

from prefixsim.errors import UserError
from prefixsim.serving.models import OPEN_MODELS, open_model


def test_model_sizes():
    # every model kvsize knows has a parameter count; llama-3.1-70b: 70.6e9 x 2 bytes, and
    # 2 (K, V) x 80 layers x 8 KV heads x 128 dims x 2 bytes = 327,680 KV bytes a token
    from prefixsim.engines.kvsize import MODELS

    assert set(OPEN_MODELS) == set(MODELS)
    m = open_model("Llama-3.1-70B")
    assert (m.weight_bytes("bf16"), m.weight_bytes("fp8"), m.kv_bytes_per_token()) == (141.2e9, 70.6e9, 327_680)
    assert open_model("llama-3.1-8b").kv_bytes_per_token() == 2 * 32 * 8 * 128 * 2
    with pytest.raises(UserError, match="did you mean 'llama-3.1-8b'"):
        open_model("llama-3.1-8")
