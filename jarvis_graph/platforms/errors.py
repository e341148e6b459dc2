"""The errors of the platform layer, apart so that the factories need not import the registry."""


class PlatformError(RuntimeError):
    """A model cannot be created: unknown platform, missing key, bad script."""


class ContextTooLongError(PlatformError):
    """The conversation does not fit the local model's context window."""


class ProviderError(RuntimeError):
    """A model call failed after retries (rate limit, server error, timeout)."""
