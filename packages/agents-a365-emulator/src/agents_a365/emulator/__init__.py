"""Emulator."""
