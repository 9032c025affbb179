"""Link shaping: what the kernel offers, and (later) applying link profiles."""
