"""Records: the OKF record model, its fast reader, vocabulary, policy, store, events, retention and secrets."""
