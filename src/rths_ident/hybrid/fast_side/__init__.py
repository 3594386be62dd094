"""The fast side of the loop: what a lab controller runs (rate transition, compensation, transfer system, specimen, sensors) and the sites built from it."""
