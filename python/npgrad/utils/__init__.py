"""Utilities mirroring ``torch.utils``."""
