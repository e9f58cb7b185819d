"""The stand-in adb (``tests/fake_adb/adb``) and the helper that scripts it from a test."""
