"""The MiniLM embedder on ONNX Runtime: real model, real tokenizer."""

from __future__ import annotations

import json

import numpy as np
import pytest

from jarvis_graph.memory.embedder import (
    MINILM_DIMS,
    HashingEmbedder,
    default_embedder,
    tokenizer_path,
)

SENTENCES = [
    "my favourite editor is vim",
    "the build runs on two cores",
    "sqlite keeps the session checkpoints",
    "lunch is at noon on fridays",
]


def test_the_tokenizer_ships_with_the_package() -> None:
    data = json.loads(tokenizer_path().read_text(encoding="utf-8"))
    assert data["model"]["type"] == "WordPiece"
    assert (tokenizer_path().parent / "NOTICE").read_text().count("Apache License") == 1


def test_vectors_are_unit_length_and_384_wide() -> None:
    vectors = np.array(default_embedder().embed_documents(SENTENCES))
    assert vectors.shape == (len(SENTENCES), MINILM_DIMS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert default_embedder().embed_documents([]) == []


def test_the_related_sentence_scores_far_above_the_others() -> None:
    emb = default_embedder()
    query = np.array(emb.embed_query("preferred text editor"))
    scores = np.array(emb.embed_documents(SENTENCES)) @ query
    assert int(np.argmax(scores)) == 0
    assert scores[0] > 0.55
    assert scores[0] - np.sort(scores)[-2] > 0.25


def test_padding_in_a_batch_does_not_change_a_vector() -> None:
    emb = default_embedder()
    alone = np.array(emb.embed_query("vim"))
    long = "a much longer sentence that forces plenty of padding onto the short one " * 3
    batched = np.array(emb.embed_documents(["vim", long]))[0]
    assert np.allclose(alone, batched, atol=1e-4)


def test_long_texts_are_truncated_not_rejected() -> None:
    vec = default_embedder().embed_query("word " * 2000)
    assert len(vec) == MINILM_DIMS and np.isfinite(vec).all()


@pytest.mark.parametrize("text", ["", "   ", "!!!"])
def test_hashing_embedder_handles_texts_without_words(text: str) -> None:
    assert HashingEmbedder(16).embed_query(text) == [0.0] * 16
