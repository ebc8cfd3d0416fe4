"""The Memzoi model: governed records, proposals, lifecycle, recall, capture and private runtime memory."""
