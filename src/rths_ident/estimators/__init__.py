"""Online and offline estimators (RLS with QP projection, LMS family, UKF/EKF, identifiers)."""
