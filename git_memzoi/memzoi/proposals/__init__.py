"""Proposals: packets, proposal files, the inbox, drafts, receipts and the lifecycle that applies them."""
