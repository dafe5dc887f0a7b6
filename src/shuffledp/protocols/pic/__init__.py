"""Private Individual Computation (pic-usenix25 §4-5): wire messages and roles."""
