"""Everything that touches untrusted code: the parent's API, the worker, the codec, process control, isolation, the submission; imports only the kit's basics."""
