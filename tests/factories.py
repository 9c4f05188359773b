import factory
from django.contrib.auth import get_user_model

PASSWORD = "una-contraseña-de-prueba"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ["username"]
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"jugador{n}")
    display_name = factory.Sequence(lambda n: f"Jugador {n}")
    password = factory.PostGenerationMethodCall("set_password", PASSWORD)

    @factory.post_generation
    def _save(obj, create, extracted, **kwargs):
        if create:
            obj.save()
