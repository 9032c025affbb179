"""What a command hands back: its console output, its exit status, its machine output
(`--json`) and where it may write."""
